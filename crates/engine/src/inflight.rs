//! Messages in flight, stored by arrival time so that delivering them reads memory in order.
//!
//! A message is handed to the store when it is sent and taken out when its delivery event
//! comes up. Deliveries come in arrival-time order, but sends do not: with random delays, a
//! slot picked from a free list (the obvious store) sits at a random address relative to the
//! delivery order, and when an election among 10,000 nodes puts 50 million messages in flight
//! at once, nearly every delivery waited for its own cache miss.
//!
//! So the store groups messages by **arrival window**: `window = arrival_ns >> WINDOW_SHIFT`
//! (about 1 µs). Messages of one window are appended to one vector and delivered while true
//! time crosses that window; the window is read through once, in address order, before its
//! first delivery (`warm_up`), so its deliveries find it in the cache, and the sends of a
//! burst append to a few thousand window tails, not to millions of scattered slots. Measured
//! (farm-bench, medians): W3 for 60 s in 0.85x the time of the free-list store; the
//! 10,000-node election (`bench/bully-10000.json`) in 61 s of user time, was 69 s.
//!
//! **Where a window lives.** Windows near the present sit in a ring indexed by `window mod
//! len`: when a message is sent at `now` with arrival window `w`, the ring slot of `w` held,
//! at most, an earlier window `w - k * len < now >> WINDOW_SHIFT`, all of whose messages
//! have been delivered (deliveries run in time order), so the slot can be reused. The ring
//! starts small and doubles (up to [`MAX_RING`] slots, about 16.8 ms of arrivals) when a
//! message arrives further ahead than it reaches; arrivals beyond that go to an ordered map.
//! The delivery event carries the message's index in its window and which of the two holds
//! it; its time is the arrival time, so the window is known when it comes up.
//!
//! Nothing here decides an order: delivery order is the event queue's `(time, seq)`, and the
//! store only keeps payloads. Memory held is what is in flight, plus window vectors of at
//! most [`POOL`] emptied window vectors kept for reuse.

use crate::time::SimTime;
use std::collections::BTreeMap;

/// log2 of the window width in ns (1,024 ns).
const WINDOW_SHIFT: u32 = 10;

/// Ring slots at the start (a power of two).
const MIN_RING: usize = 16;

/// Most ring slots (a power of two): 16,384 windows of 1,024 ns, about 16.8 ms ahead.
const MAX_RING: usize = 16_384;

/// An emptied window's vector is kept for reuse if its allocation is at most this many
/// entries ...
const KEEP: usize = 1024;

/// ... and fewer than this many are kept. Reusing the vector just emptied (the pool is a
/// stack) writes the next window into memory the cache still holds.
const POOL: usize = 256;

/// Where a stored message is, as the delivery event carries it: its index in its window,
/// and whether the window is in the far map rather than the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub(crate) index: u32,
    pub(crate) far: bool,
}

/// One arrival window: its messages in send order (`None` once delivered) and how many are
/// still there.
struct Window<P> {
    /// The window number (`arrival_ns >> WINDOW_SHIFT`); meaningful while `live > 0`.
    key: u64,
    items: Vec<Option<P>>,
    live: u32,
    /// Whether the window was read through once since its first delivery (see `warm`).
    warm: bool,
}

impl<P> Window<P> {
    fn empty() -> Self {
        Window {
            key: 0,
            items: Vec::new(),
            live: 0,
            warm: false,
        }
    }

    fn put(&mut self, p: P, pool: &mut Vec<Vec<Option<P>>>) -> u32 {
        if self.live == 0 {
            self.warm = false;
            if self.items.capacity() == 0 {
                self.items = pool.pop().unwrap_or_default();
            }
        }
        let index = self.items.len() as u32;
        self.items.push(Some(p));
        self.live += 1;
        index
    }

    fn take(&mut self, index: u32, pool: &mut Vec<Vec<Option<P>>>) -> P {
        if !self.warm {
            self.warm_up();
        }
        let p = self.items[index as usize]
            .take()
            .expect("a message is taken once");
        self.live -= 1;
        if self.live == 0 {
            let mut items = std::mem::take(&mut self.items);
            if pool.len() < POOL && items.capacity() <= KEEP {
                items.clear();
                pool.push(items);
            }
        }
        p
    }

    /// Reads the window once, front to back, before its first delivery. The window was
    /// written up to a few ms ago and has usually left the cache since; its deliveries read it
    /// in arrival order, which is not the order it was written in, so each would wait for
    /// its own cache miss. One pass in address order brings it back at streaming speed (the
    /// loads are independent and the hardware prefetcher follows them).
    #[cold]
    fn warm_up(&mut self) {
        self.warm = true;
        let present = self.items.iter().filter(|m| m.is_some()).count();
        std::hint::black_box(present);
    }
}

/// The messages in flight (see the module doc).
pub(crate) struct InFlightStore<P> {
    /// Windows near the present; slot `w & (len - 1)` holds window `w`.
    ring: Vec<Window<P>>,
    /// Windows too far ahead for the ring, by window number.
    far: BTreeMap<u64, Window<P>>,
    /// Emptied window vectors, for reuse (at most [`POOL`]).
    pool: Vec<Vec<Option<P>>>,
}

impl<P> InFlightStore<P> {
    /// An empty store.
    pub(crate) fn new() -> Self {
        InFlightStore {
            ring: (0..MIN_RING).map(|_| Window::empty()).collect(),
            far: BTreeMap::new(),
            pool: Vec::new(),
        }
    }

    /// Stores a message sent at `now` that arrives at `at` (`at >= now`).
    #[inline]
    pub(crate) fn put(&mut self, now: SimTime, at: SimTime, p: P) -> Ticket {
        let w = at.0 >> WINDOW_SHIFT;
        let ahead = w - (now.0 >> WINDOW_SHIFT);
        if ahead >= self.ring.len() as u64 && !self.grow(ahead) {
            let window = self.far.entry(w).or_insert_with(Window::empty);
            window.key = w;
            return Ticket {
                index: window.put(p, &mut self.pool),
                far: true,
            };
        }
        let mask = self.ring.len() as u64 - 1;
        let window = &mut self.ring[(w & mask) as usize];
        if window.key != w {
            // The slot held an earlier window, whose messages have all been delivered.
            debug_assert_eq!(window.live, 0, "a ring slot is reused while in flight");
            window.key = w;
        }
        Ticket {
            index: window.put(p, &mut self.pool),
            far: false,
        }
    }

    /// Takes out the message of `ticket`, whose delivery event is at `at` (its arrival time).
    #[inline]
    pub(crate) fn take(&mut self, at: SimTime, ticket: Ticket) -> P {
        let w = at.0 >> WINDOW_SHIFT;
        if ticket.far {
            let window = self
                .far
                .get_mut(&w)
                .expect("a far window holds the message");
            let p = window.take(ticket.index, &mut self.pool);
            if window.live == 0 {
                self.far.remove(&w);
            }
            return p;
        }
        let mask = self.ring.len() as u64 - 1;
        let window = &mut self.ring[(w & mask) as usize];
        debug_assert_eq!(window.key, w, "the ring slot holds the message's window");
        window.take(ticket.index, &mut self.pool)
    }

    /// Doubles the ring until it reaches `ahead` windows past the present, if it may grow
    /// that far; `false` (and no change) if it may not. Windows in flight keep their numbers
    /// and move to their slots in the larger ring (distinct, as they span fewer windows than
    /// the old length).
    #[cold]
    fn grow(&mut self, ahead: u64) -> bool {
        if ahead >= MAX_RING as u64 {
            return false;
        }
        let mut len = self.ring.len();
        while (len as u64) <= ahead {
            len *= 2;
        }
        let old = std::mem::replace(&mut self.ring, (0..len).map(|_| Window::empty()).collect());
        let mask = len as u64 - 1;
        for window in old {
            if window.live > 0 {
                let slot = (window.key & mask) as usize;
                self.ring[slot] = window;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStream;

    /// Random sends and in-order deliveries, delays from sub-window to far beyond the ring:
    /// every message comes back as it went in.
    #[test]
    fn every_message_comes_back_whatever_its_delay() {
        for seed in 0..10 {
            let mut rng = RngStream::new(seed, "inflight");
            let mut store = InFlightStore::new();
            // (arrival, send order, ticket), delivered in (arrival, send order) order.
            let mut pending: BTreeMap<(u64, u64), Ticket> = BTreeMap::new();
            let mut now = 0u64;
            let mut sent = 0u64;
            for _ in 0..20_000 {
                if rng.uniform_inclusive(0, 2) > 0 {
                    let bits = rng.uniform_inclusive(0, 36);
                    let at = now + rng.uniform_inclusive(0, 1 << bits);
                    let t = store.put(SimTime(now), SimTime(at), (at, sent));
                    pending.insert((at, sent), t);
                    sent += 1;
                } else if let Some(((at, n), t)) = pending.pop_first() {
                    now = at;
                    assert_eq!(store.take(SimTime(at), t), (at, n), "seed {seed}");
                }
            }
            while let Some(((at, n), t)) = pending.pop_first() {
                assert_eq!(store.take(SimTime(at), t), (at, n));
            }
            assert!(store.far.is_empty());
            assert!(store.ring.iter().all(|w| w.live == 0));
        }
    }

    #[test]
    fn the_ring_grows_for_longer_delays_and_far_windows_are_freed() {
        let mut store = InFlightStore::new();
        let now = SimTime(5_000_000);
        let near = store.put(now, SimTime(5_001_000), 1u32);
        assert_eq!(store.ring.len(), MIN_RING);
        // 3 ms ahead: about 2,930 windows, so the ring doubles to 4,096 slots.
        let mid = store.put(now, SimTime(8_000_000), 2);
        assert_eq!(store.ring.len(), 4096);
        assert!(!mid.far);
        // 1 s ahead: beyond the largest ring.
        let far = store.put(now, SimTime(1_005_000_000), 3);
        assert!(far.far);
        assert_eq!(store.take(SimTime(5_001_000), near), 1);
        assert_eq!(store.take(SimTime(8_000_000), mid), 2);
        assert_eq!(store.take(SimTime(1_005_000_000), far), 3);
        assert!(store.far.is_empty());
    }
}
