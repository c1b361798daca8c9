//! The event queue: a radix heap (a monotone priority queue) on true time, in exact
//! `(time, seq)` order.
//!
//! Source: R. K. Ahuja, K. Mehlhorn, J. B. Orlin, R. E. Tarjan, "Faster Algorithms for the
//! Shortest Path Problem", JACM 37(2), 1990 (the radix heap), here with 16-way digits: a
//! time is 16 digits of 4 bits. A discrete-event simulator is the case it is made for: the
//! smallest key never decreases, because nothing is scheduled before the event being
//! processed.
//!
//! Bucket 0 holds the next entries to leave, in order; `last` is the time of its last entry
//! (or of the last entry taken, once it is empty), and every other entry is later than
//! `last`. Bucket `(l, k)` holds the entries whose time first differs from `last` in digit
//! `l` (counted from the least significant), where their digit is `k` (so `k` is above
//! `last`'s). Buckets in `(l, k)` order hold ever later entries: one in `(l, k)` agrees with
//! `last` above digit `l`, so it is earlier than one that differs higher up, and at digit `l`
//! it is `k`. When bucket 0 runs dry, the first non-empty bucket `(l, k)` is emptied:
//!
//! - **small** (at most [`SORT_AT_MOST`] entries): it is sorted by time (ties keep their
//!   order) into bucket 0, and its latest time becomes `last`; the
//!   other buckets stay valid, because the new `last` agrees with the old one from digit `l`
//!   up, and has digit `k` there, below every other bucket of level `l`;
//! - **large**: its entries move into the lower levels around its smallest time, which
//!   becomes `last`; an entry moves at most 16 times.
//!
//! Wide digits and sorting the small buckets are what keep dense keys cheap: half a million
//! messages in flight within a few ms (an election among 1,000 nodes) moving down one bit at
//! a time would cost about a third of W3's instructions (measured with cachegrind).
//!
//! **Order of ties.** No sequence number is stored: a bucket keeps its entries in the order
//! they were scheduled (a new entry is appended; a bucket being emptied is walked in order,
//! and the buckets it fills were all empty), so entries of equal time leave in scheduling
//! order, exactly as `(time, seq)` orders them.
//!
//! **Payloads.** An entry is its time, a 64-bit word the engine packs and unpacks, and a
//! payload of the queue's type `P` that moves with it (the engine's: the message a delivery
//! carries, so a delivery reads it where the queue already is). A payload of
//! no size (a simulation whose message type has no values, W1) leaves an entry at 16 bytes.
//!
//! **Entries before `last`.** An entry scheduled before `last` (inside the span of a sorted
//! bucket 0, or before an event that a previous `run_until` call peeked at) goes into a side
//! binary heap on `(time, seq)`, `seq` counted by the heap; it leaves before bucket 0's next
//! entry when its time is earlier, and after it on a tie (bucket 0's entries were all queued
//! before it), which is its `(time, seq)` place. Bucket 0 is refilled only once both are
//! empty. Inserting such an entry into bucket 0 instead would move every later entry (32
//! bytes each with the protocols' messages), a sixth of W2's instructions.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One queued event: its true time, a 64-bit word the engine packs and unpacks, and a
/// payload that travels with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Item<P> {
    pub(crate) time: SimTime,
    pub(crate) data: u64,
    pub(crate) payload: P,
}

/// An entry queued before `last`, with its place among those (see the module doc).
struct EarlyItem<P> {
    seq: u64,
    item: Item<P>,
}

impl<P> PartialEq for EarlyItem<P> {
    fn eq(&self, other: &Self) -> bool {
        (self.item.time, self.seq) == (other.item.time, other.seq)
    }
}
impl<P> Eq for EarlyItem<P> {}
impl<P> PartialOrd for EarlyItem<P> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<P> Ord for EarlyItem<P> {
    /// Reversed, so the max-heap's top is the smallest `(time, seq)`.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.item.time, other.seq).cmp(&(self.item.time, self.seq))
    }
}

/// A bucket emptied keeps an allocation of up to this many entries; a larger one it keeps
/// only while the large allocations kept in all hold at most [`PARK_AT_MOST`] entries.
const KEEP: usize = 4096;

/// The large allocations (over [`KEEP`] entries) that emptied buckets keep hold at most this
/// many entries in all (16 MB with the protocols' 32-byte entries).
const PARK_AT_MOST: usize = 1 << 19;

/// A bucket of at most this many entries is sorted into bucket 0 rather than spread over
/// the lower levels.
const SORT_AT_MOST: usize = 64;

/// Bits per digit.
const DIGIT_BITS: u32 = 4;

/// Buckets: 16 levels of 16 digit values, bucket `(l, k)` at index `16 l + k` (digit value
/// 0 is never used: an entry's digit is above `last`'s).
const BUCKETS: usize = 256;

/// The bucket of an entry at `time` (later than `last`).
#[inline]
fn bucket_of(time: SimTime, last: SimTime) -> usize {
    let high = 63 - (time.0 ^ last.0).leading_zeros();
    let level = high / DIGIT_BITS;
    let digit = (time.0 >> (level * DIGIT_BITS)) & 15;
    (level * 16) as usize + digit as usize
}

/// The event queue (see the module doc). Pops in exact `(time, seq)` order, where `seq` is
/// the order of [`EventQueue::push`] calls. `P` is the payload an entry carries; a served
/// entry of bucket 0 keeps `P::default()` until bucket 0 is emptied.
pub(crate) struct EventQueue<P> {
    /// Bucket 0: the next entries in order, served from `head` on.
    zero: Vec<Item<P>>,
    head: usize,
    /// Buckets `(l, k)` at index `16 l + k`.
    buckets: Vec<Vec<Item<P>>>,
    /// Bit `i % 64` of word `i / 64` set: bucket `i` is non-empty.
    nonempty: [u64; BUCKETS / 64],
    /// See the module doc: no entry outside bucket 0 and `early` is this early.
    last: SimTime,
    /// The capacity of the large allocation (over [`KEEP`] entries) each bucket kept when it
    /// was emptied (0: none), by bucket. An election among 1,000 nodes fills and empties
    /// buckets of tens of thousands of entries over and over; fresh memory each time (page
    /// faults, the copies of growth by doubling) would make a third of W3's cache misses. The
    /// same buckets fill again, so each keeps its own.
    parked: [usize; BUCKETS],
    /// The sum of `parked`, at most [`PARK_AT_MOST`].
    parked_entries: usize,
    /// Entries queued before `last` (see the module doc).
    early: BinaryHeap<EarlyItem<P>>,
    /// Entries put into `early` so far: their `seq`.
    early_seq: u64,
    /// The sort keys of a small bucket (see [`EventQueue::sort_into_zero`]), kept between
    /// refills.
    keys: Vec<u64>,
    #[cfg(test)]
    len: usize,
}

impl<P: Default> EventQueue<P> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            zero: Vec::new(),
            head: 0,
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            nonempty: [0; BUCKETS / 64],
            last: SimTime::ZERO,
            parked: [0; BUCKETS],
            parked_entries: 0,
            early: BinaryHeap::new(),
            early_seq: 0,
            keys: Vec::new(),
            #[cfg(test)]
            len: 0,
        }
    }

    /// Entries queued.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Entries queued, counted from the buckets (no counter is kept in `push` and `pop`, the
    /// event loop's hottest path): O(non-empty buckets), for the in-flight bound, which asks
    /// once per 1,024 events and after each node's start.
    pub(crate) fn queued(&self) -> usize {
        let mut n = self.zero.len() - self.head + self.early.len();
        for (w, &word) in self.nonempty.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                n += self.buckets[i].len();
                bits &= bits - 1;
            }
        }
        n
    }

    /// Queues `data` and `payload` at `time`, after every entry already queued at the same
    /// time.
    #[inline]
    pub(crate) fn push(&mut self, time: SimTime, data: u64, payload: P) {
        #[cfg(test)]
        {
            self.len += 1;
        }
        let item = Item {
            time,
            data,
            payload,
        };
        if time == self.last {
            self.zero.push(item);
        } else if time > self.last {
            let b = bucket_of(time, self.last);
            self.buckets[b].push(item);
            self.nonempty[b / 64] |= 1 << (b % 64);
        } else {
            self.insert_early(item);
        }
    }

    /// Queues an entry earlier than `last` in the side heap (see the module doc). Bucket 0
    /// does not grow with them, so the entries served from it meanwhile are not kept longer
    /// (in a long run of lesson 15 they would come to megabytes).
    #[cold]
    fn insert_early(&mut self, item: Item<P>) {
        let seq = self.early_seq;
        self.early_seq += 1;
        self.early.push(EarlyItem { seq, item });
    }

    /// Whether the next entry to leave is the side heap's top rather than bucket 0's next.
    #[inline]
    fn early_first(&self) -> bool {
        match self.early.peek() {
            None => false,
            Some(e) => match self.zero.get(self.head) {
                None => true,
                Some(z) => e.item.time < z.time,
            },
        }
    }

    /// The first non-empty bucket, if any.
    #[inline]
    fn first_bucket(&self) -> Option<usize> {
        self.nonempty
            .iter()
            .position(|w| *w != 0)
            .map(|i| i * 64 + self.nonempty[i].trailing_zeros() as usize)
    }

    /// Makes bucket 0 non-empty if any entry is left; `false` if none is.
    #[inline(always)]
    fn refill(&mut self) -> bool {
        if self.head < self.zero.len() || !self.early.is_empty() {
            return true;
        }
        self.refill_from_buckets()
    }

    /// [`EventQueue::refill`] once bucket 0 and the side heap are empty: empties the first
    /// non-empty bucket into bucket 0 and the buckets before it. Apart from the test that
    /// bucket 0 is empty, which is always inlined: the event loop asks for an entry twice an
    /// event (peek, pop), and a call of the whole refill, which saved and restored registers
    /// each time, would be 3% of W3's instructions.
    #[inline]
    fn refill_from_buckets(&mut self) -> bool {
        self.head = 0;
        let Some(b) = self.first_bucket() else {
            self.clear_zero();
            return false;
        };
        self.nonempty[b / 64] &= !(1 << (b % 64));
        let mut bucket = std::mem::take(&mut self.buckets[b]);
        self.parked_entries -= std::mem::take(&mut self.parked[b]);
        if bucket.len() <= SORT_AT_MOST {
            self.sort_into_zero(b, &mut bucket);
            self.last = self.zero.last().expect("non-empty bucket").time;
            if bucket.capacity() > KEEP {
                self.park(b, bucket);
            } else if bucket.capacity() > 0 {
                // An allocation, maybe bucket 0's old one: the bucket fills again.
                self.buckets[b] = bucket;
            }
            return true;
        }
        self.clear_zero();
        let min = bucket
            .iter()
            .map(|i| i.time)
            .min()
            .expect("non-empty bucket");
        self.last = min;
        // Every bucket before `b` is empty, and the entries land in buckets before `b`
        // (they agree with `min` from level `b / 16` up), so they keep their order there.
        for item in bucket.drain(..) {
            if item.time == min {
                self.zero.push(item);
            } else {
                let i = bucket_of(item.time, min);
                self.buckets[i].push(item);
                self.nonempty[i / 64] |= 1 << (i % 64);
            }
        }
        // Keep a small allocation (the bucket fills again), and a large one while the
        // large ones kept hold at most `PARK_AT_MOST` entries; give the others back, so
        // the memory held is what the queue holds now and that bound, not every bucket's
        // largest size so far.
        if bucket.capacity() <= KEEP {
            self.buckets[b] = bucket;
        } else {
            self.park(b, bucket);
        }
        true
    }

    /// Moves the entries of bucket `b` (taken out as `bucket`, at most [`SORT_AT_MOST`]
    /// entries) into the emptied bucket 0 in `(time, order in bucket)` order. `bucket` is
    /// left empty, holding an allocation for bucket `b` or none.
    ///
    /// Entries of 16 bytes (no payload) are sorted in place by a stable sort, and the bucket's
    /// allocation becomes bucket 0's. Larger entries are not moved by the sort: they agree on
    /// every bit of their time from the bucket's digit up, so a 64-bit key is the bits below
    /// it and the entry's index (which keeps ties in order); the keys are sorted and the
    /// entries gathered in their order. Sorting W3's 32-byte entries themselves would be a tenth
    /// of its instructions, while W1's 16-byte ones sort faster in place.
    #[inline(never)]
    fn sort_into_zero(&mut self, b: usize, bucket: &mut Vec<Item<P>>) {
        const INDEX_BITS: u32 = 6;
        const _: () = assert!(SORT_AT_MOST <= 1 << INDEX_BITS);
        let low_bits = DIGIT_BITS * (b / 16) as u32;
        if std::mem::size_of::<Item<P>>() <= 16 || low_bits + INDEX_BITS > 64 {
            if bucket.capacity() > KEEP {
                // A few entries in a large allocation: they move to bucket 0's, and the
                // bucket keeps its own for the next time it fills.
                self.clear_zero();
                self.zero.append(bucket);
                if low_bits > 0 {
                    self.zero.sort_by_key(|i| i.time);
                }
                return;
            }
            if low_bits > 0 {
                bucket.sort_by_key(|i| i.time);
            }
            // The emptied bucket 0's allocation goes to the bucket just taken.
            std::mem::swap(&mut self.zero, bucket);
            bucket.clear();
            if bucket.capacity() > KEEP {
                *bucket = Vec::new();
            }
            return;
        }
        self.clear_zero();
        if low_bits == 0 {
            // Level 0: every entry has the same time, and they are in push order.
            self.zero.append(bucket);
            return;
        }
        let low = (1u64 << low_bits) - 1;
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        keys.extend(
            bucket
                .iter()
                .enumerate()
                .map(|(i, item)| (item.time.0 & low) << INDEX_BITS | i as u64),
        );
        keys.sort_unstable();
        self.zero.extend(keys.iter().map(|key| {
            let item = &mut bucket[(key & ((1 << INDEX_BITS) - 1)) as usize];
            Item {
                time: item.time,
                data: item.data,
                payload: std::mem::take(&mut item.payload),
            }
        }));
        self.keys = keys;
        bucket.clear();
    }

    /// Gives the emptied bucket `b` the large allocation `v` back if the bound allows, else
    /// frees it.
    #[inline]
    fn park(&mut self, b: usize, v: Vec<Item<P>>) {
        debug_assert!(v.is_empty() && self.buckets[b].capacity() == 0);
        let cap = v.capacity();
        if self.parked_entries + cap <= PARK_AT_MOST {
            self.parked_entries += cap;
            self.parked[b] = cap;
            self.buckets[b] = v;
        }
    }

    /// Empties bucket 0, giving a large allocation back.
    #[inline]
    fn clear_zero(&mut self) {
        if self.zero.capacity() > KEEP {
            self.zero = Vec::new();
        } else {
            self.zero.clear();
        }
    }

    /// The time of the earliest entry, without taking it out.
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<SimTime> {
        if self.early_first() {
            return self.early.peek().map(|e| e.item.time);
        }
        if self.refill() {
            Some(self.zero[self.head].time)
        } else {
            None
        }
    }

    /// Calls `f` on the data word of every queued entry, in no particular order (the engine
    /// marks entries stale with it; `f` must not change what orders them: time is not
    /// shown). O(entries queued).
    pub(crate) fn for_each_data_mut(&mut self, mut f: impl FnMut(&mut u64)) {
        let head = self.head;
        for item in self.zero.iter_mut().skip(head) {
            f(&mut item.data);
        }
        if !self.early.is_empty() {
            // The data word does not order them, so the heap rebuilt from them is valid.
            let mut early = std::mem::take(&mut self.early).into_vec();
            for e in &mut early {
                f(&mut e.item.data);
            }
            self.early = BinaryHeap::from(early);
        }
        for (w, word) in self.nonempty.iter().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let b = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                for item in &mut self.buckets[b] {
                    f(&mut item.data);
                }
            }
        }
    }

    /// The data word of an entry that leaves soon: the one `k` places on in bucket 0 if it
    /// holds it (entries queued before `last` not counted), else one from the first other
    /// non-empty bucket (whose entries all leave next, in an order not known yet), else the
    /// side heap's top. A look ahead for prefetching only.
    #[inline]
    pub(crate) fn ahead(&self, k: usize) -> Option<u64> {
        let i = self.head + k;
        if let Some(item) = self.zero.get(i) {
            return Some(item.data);
        }
        let Some(b) = self.first_bucket() else {
            return self.early.peek().map(|e| e.item.data);
        };
        let bucket = &self.buckets[b];
        bucket
            .get((i - self.zero.len()).min(bucket.len() - 1))
            .map(|item| item.data)
    }

    /// Takes out the earliest entry.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Item<P>> {
        if self.early_first() {
            #[cfg(test)]
            {
                self.len -= 1;
            }
            return self.early.pop().map(|e| e.item);
        }
        if self.refill() {
            let served = &mut self.zero[self.head];
            let item = Item {
                time: served.time,
                data: served.data,
                payload: std::mem::take(&mut served.payload),
            };
            self.head += 1;
            #[cfg(test)]
            {
                self.len -= 1;
            }
            Some(item)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RngStream;
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;

    /// A reference entry: ordered by `(time, seq)`, smallest first in a max-heap.
    #[derive(Clone, Copy, Debug)]
    struct Early {
        time: SimTime,
        seq: u64,
        data: u64,
    }
    impl PartialEq for Early {
        fn eq(&self, other: &Self) -> bool {
            (self.time, self.seq) == (other.time, other.seq)
        }
    }
    impl Eq for Early {}
    impl PartialOrd for Early {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Early {
        fn cmp(&self, other: &Self) -> Ordering {
            (other.time, other.seq).cmp(&(self.time, self.seq))
        }
    }

    /// Entries inserted into bucket 0 before its last entry, and served, do not stay in it.
    /// Bucket 0 holds 16 ns and 31 ns (one bucket, sorted); then 10,000 times an entry at
    /// 17 ns is queued (before `last`, 31 ns) and served: bucket 0 must not hold all 10,002.
    #[test]
    fn served_entries_leave_bucket_0() {
        let mut q = EventQueue::new();
        q.push(SimTime(0x10), 0, !0);
        q.push(SimTime(0x1F), 1, !1);
        assert_eq!(q.pop().map(|i| i.data), Some(0));
        for k in 0..10_000u64 {
            q.push(SimTime(0x11), 2 + k, !(2 + k));
            assert_eq!(
                q.pop(),
                Some(Item {
                    time: SimTime(0x11),
                    data: 2 + k,
                    payload: !(2 + k)
                })
            );
            assert!(
                q.zero.len() <= 2 && q.early.len() <= 1,
                "{} in bucket 0",
                q.zero.len()
            );
        }
        assert_eq!(q.pop().map(|i| i.data), Some(1));
        assert_eq!(q.pop(), None);
    }

    /// The queue pops exactly in `(time, seq)` order, as a binary heap of `(time, seq)` does,
    /// through a random mix of pushes at or after the current time (ties included), pushes
    /// into the past, peeks and pops.
    #[test]
    fn pops_in_exact_time_then_seq_order() {
        for seed in 0..20 {
            let mut rng = RngStream::new(seed, "queue");
            let mut q = EventQueue::new();
            let mut reference: BinaryHeap<Early> = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for _ in 0..20_000 {
                let r = rng.uniform_inclusive(0, 99);
                if r < 55 {
                    let time = match rng.uniform_inclusive(0, 9) {
                        0 => now,
                        1 => now + rng.uniform_inclusive(0, 3),
                        // Into the past, as a fault scheduled between two runs can be.
                        2 if now > 0 => rng.uniform_inclusive(0, now),
                        _ => {
                            let bits = rng.uniform_inclusive(0, 40);
                            now + rng.uniform_inclusive(0, 1 << bits)
                        }
                    };
                    push_both(&mut q, &mut reference, &mut seq, SimTime(time));
                } else if r < 60 {
                    let want = reference.peek().map(|e| (e.time, e.data));
                    assert_eq!(q.peek(), want.map(|(t, _)| t));
                } else {
                    let want = reference.pop().map(|e| (e.time, e.data));
                    let got = q.pop().map(|i| {
                        assert_eq!(i.payload, !i.data, "the payload travels with its entry");
                        (i.time, i.data)
                    });
                    assert_eq!(got, want, "seed {seed}");
                    if let Some((t, _)) = got {
                        now = now.max(t.0);
                    }
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.queued(), reference.len(), "counted from the buckets");
            }
            while let Some(e) = reference.pop() {
                assert_eq!(q.pop().map(|i| (i.time, i.data)), Some((e.time, e.data)));
            }
            assert_eq!(q.pop(), None);
        }
    }

    /// Pushes entry `seq` at `time` into the queue and the reference, and counts it.
    fn push_both(
        q: &mut EventQueue<u64>,
        reference: &mut BinaryHeap<Early>,
        seq: &mut u64,
        time: SimTime,
    ) {
        q.push(time, *seq, !*seq);
        reference.push(Early {
            time,
            seq: *seq,
            data: *seq,
        });
        *seq += 1;
    }

    /// Bursts of thousands of entries within a few thousand ns, with many ties (buckets both
    /// over and under the sorting size), against a binary heap of `(time, seq)`.
    #[test]
    fn dense_bursts_pop_in_exact_time_then_seq_order() {
        for seed in 0..10 {
            let mut rng = RngStream::new(seed, "queue-dense");
            let mut q = EventQueue::new();
            let mut reference: BinaryHeap<Early> = BinaryHeap::new();
            let (mut seq, mut now) = (0u64, 0u64);
            for _round in 0..20 {
                let burst = rng.uniform_inclusive(1, 5000);
                let spread = rng.uniform_inclusive(0, 3000);
                for _ in 0..burst {
                    let time = SimTime(now + rng.uniform_inclusive(0, spread));
                    push_both(&mut q, &mut reference, &mut seq, time);
                }
                // Take out about half, scheduling a little more as events do.
                for _ in 0..burst / 2 {
                    let want = reference.pop().map(|e| (e.time, e.data));
                    let got = q.pop().map(|i| (i.time, i.data));
                    assert_eq!(got, want, "seed {seed}");
                    now = got.map_or(now, |(t, _)| t.0);
                    if rng.uniform_inclusive(0, 3) == 0 {
                        let time = SimTime(now + rng.uniform_inclusive(0, 50));
                        push_both(&mut q, &mut reference, &mut seq, time);
                    }
                }
            }
            while let Some(e) = reference.pop() {
                assert_eq!(q.pop().map(|i| (i.time, i.data)), Some((e.time, e.data)));
            }
            assert_eq!(q.pop(), None);
        }
    }

    /// Bursts of tens of thousands of entries within about 2 ms (an election
    /// among 1,000 nodes) fill buckets of more than `KEEP` entries again and again. Emptied,
    /// such a bucket keeps its allocation for the next burst while the kept ones hold at most
    /// `PARK_AT_MOST` entries in all; the order stays exact throughout.
    #[test]
    fn large_buckets_keep_their_allocations_within_the_bound() {
        let mut rng = RngStream::new(3, "queue-park");
        let mut q = EventQueue::new();
        let mut reference: BinaryHeap<Early> = BinaryHeap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        let mut kept_between_bursts = false;
        for _burst in 0..6 {
            for _ in 0..60_000 {
                let time = SimTime(now + rng.uniform_inclusive(1_000_000, 3_000_000));
                push_both(&mut q, &mut reference, &mut seq, time);
            }
            while let Some(e) = reference.pop() {
                let got = q.pop().map(|i| (i.time, i.data));
                assert_eq!(got, Some((e.time, e.data)));
                now = e.time.0;
                assert_eq!(q.parked_entries, q.parked.iter().sum::<usize>());
                assert!(q.parked_entries <= PARK_AT_MOST, "{}", q.parked_entries);
            }
            assert_eq!(q.pop(), None);
            let large: usize = q
                .buckets
                .iter()
                .map(|b| b.capacity())
                .filter(|&c| c > KEEP)
                .sum();
            assert!(
                large <= PARK_AT_MOST,
                "{large} entries held in large buckets"
            );
            kept_between_bursts |= q.parked_entries > 0;
        }
        assert!(kept_between_bursts, "no large allocation was kept");
    }

    /// Both ways of sorting a small bucket keep exact `(time, seq)` order: in place for
    /// entries without a payload (16 bytes, W1's), and through keys for entries with one,
    /// including buckets of the top level, whose keys would not fit (times near 2^63).
    #[test]
    fn small_buckets_sort_exactly_with_and_without_payloads() {
        for (seed, base) in [(0u64, 0u64), (1, 1 << 62), (2, (1 << 63) - (1 << 40))] {
            let mut rng = RngStream::new(seed, "queue-small");
            let mut unit: EventQueue<()> = EventQueue::new();
            let mut with: EventQueue<u64> = EventQueue::new();
            let mut reference: BinaryHeap<Early> = BinaryHeap::new();
            let (mut seq, mut now) = (0u64, base);
            for _ in 0..200 {
                for _ in 0..rng.uniform_inclusive(1, 300) {
                    let bits = rng.uniform_inclusive(0, 62);
                    let time = now.saturating_add(rng.uniform_inclusive(0, 1 << bits));
                    unit.push(SimTime(time), seq, ());
                    with.push(SimTime(time), seq, !seq);
                    reference.push(Early {
                        time: SimTime(time),
                        seq,
                        data: seq,
                    });
                    seq += 1;
                }
                for _ in 0..rng.uniform_inclusive(0, 300) {
                    let want = reference.pop().map(|e| (e.time, e.data));
                    assert_eq!(unit.pop().map(|i| (i.time, i.data)), want);
                    let got = with.pop().map(|i| (i.time, i.data, !i.payload));
                    assert_eq!(got, want.map(|(t, d)| (t, d, d)));
                    if let Some((t, _)) = want {
                        now = t.0;
                    }
                }
            }
            while let Some(e) = reference.pop() {
                assert_eq!(unit.pop().map(|i| (i.time, i.data)), Some((e.time, e.data)));
                assert_eq!(with.pop().map(|i| (i.time, i.data)), Some((e.time, e.data)));
            }
            assert!(unit.pop().is_none() && with.pop().is_none());
        }
    }

    #[test]
    fn ties_leave_in_push_order() {
        let mut q = EventQueue::new();
        for d in 0..100 {
            q.push(SimTime(1000), d, !d);
        }
        q.push(SimTime(5), 1000, !1000);
        assert_eq!(q.pop().map(|i| i.data), Some(1000));
        q.push(SimTime(1000), 100, !100);
        q.push(SimTime(1000), 101, !101);
        for d in 0..102 {
            assert_eq!(
                q.pop(),
                Some(Item {
                    time: SimTime(1000),
                    data: d,
                    payload: !d
                })
            );
        }
        assert_eq!(q.pop(), None);
    }

    /// `ahead` names an entry that is still queued (it is only a prefetch hint, but a hint at
    /// something gone would be wasted), the exact one `k` places on while bucket 0 holds it,
    /// and nothing once the queue is empty.
    #[test]
    fn ahead_names_a_queued_entry() {
        let mut q = EventQueue::new();
        let mut rng = RngStream::new(11, "ahead");
        let mut queued = std::collections::BTreeSet::new();
        let mut now = 0;
        for d in 0..5_000u64 {
            let t = now + rng.uniform_inclusive(0, 3_000);
            q.push(SimTime(t), d, !d);
            queued.insert(d);
            if d % 3 == 0 {
                let top = q.pop().expect("non-empty");
                now = top.time.0;
                queued.remove(&top.data);
            }
            for k in [0, 1, 4, 100] {
                if let Some(data) = q.ahead(k) {
                    assert!(queued.contains(&data), "ahead({k}) named a popped entry");
                }
            }
            if q.head + 4 < q.zero.len() {
                assert_eq!(q.ahead(4), Some(q.zero[q.head + 4].data));
            }
        }
        assert!(q.ahead(0).is_some());
        while q.pop().is_some() {}
        assert_eq!(q.ahead(0), None);
        assert_eq!(q.ahead(4), None);
    }

    /// `for_each_data_mut` reaches every queued entry once (bucket 0 from its head, and every
    /// other bucket), and what it writes is what leaves.
    #[test]
    fn for_each_data_mut_reaches_every_queued_entry() {
        let mut q = EventQueue::new();
        let mut rng = RngStream::new(5, "walk");
        let mut now = 0;
        let mut queued = std::collections::BTreeSet::new();
        for d in 0..3_000u64 {
            q.push(SimTime(now + rng.uniform_inclusive(0, 5_000)), d, !d);
            queued.insert(d);
            if d % 4 == 0 {
                let top = q.pop().expect("non-empty");
                now = top.time.0;
                queued.remove(&top.data);
            }
        }
        let mut seen = Vec::new();
        q.for_each_data_mut(|d| {
            seen.push(*d);
            *d |= 1 << 63;
        });
        seen.sort_unstable();
        assert_eq!(seen, queued.iter().copied().collect::<Vec<_>>());
        let mut left = 0;
        while let Some(i) = q.pop() {
            assert_eq!(i.data, (!i.payload) | 1 << 63);
            left += 1;
        }
        assert_eq!(left, queued.len());
    }
}
