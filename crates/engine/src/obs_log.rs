//! [`ObsLog`]: the run's observations, appended in order and never moved.
//!
//! A `Vec` that grows by doubling copies every element at each growth and, at that instant,
//! holds the old and the new buffer: a run of lesson 15 lasting 3,000 s (32,000 observations
//! of 104 bytes) peaked at 5 MB for 3.3 MB of observations, and the allocator kept the freed
//! buffers' pages resident, where memory should stay flat in run length. The log keeps its
//! elements in chunks of [`CHUNK`] that are allocated once at full size (the first grows like
//! a `Vec`, so a short run pays for what it records): appending never copies, and the most it
//! holds beyond its elements is one partly filled chunk.
//!
//! A run that keeps only the observations its checks read (an [`ObsFilter`])
//! still numbers every observation: the log counts a left-out one ([`ObsLog::skip`], by kind)
//! and keeps beside each element its index among all the run's observations, so evidence
//! cites an observation by the same index whether or not the others were kept. Indexing
//! ([`ObsLog::get`]) is by that index; [`ObsLog::iter`] yields the kept elements and
//! [`ObsLog::iter_indexed`] pairs each with its index.

use crate::{NodeId, SimTime};
use std::collections::BTreeMap;
use std::ops::Index;

/// Decides, as a run goes, which observations its log keeps (a run that is only checked
/// keeps what its checks read). Generic over the observation type: the engine
/// knows no algorithm. Set with [`Sim::set_obs_filter`](crate::Sim::set_obs_filter); a left-out
/// observation still takes its index and is counted by kind ([`ObsLog::skipped`]), and the
/// trace and fault triggers see every observation either way.
pub trait ObsFilter<O> {
    /// Whether to keep `obs`, reported by `node` at true time `t` (ns).
    fn keep(&mut self, t: SimTime, node: NodeId, obs: &O) -> bool;
    /// A `Crash` fault of `node` was applied (whether or not it was up).
    fn crashed(&mut self, node: NodeId) {
        let _ = node;
    }
}

/// An observation's index as a log with left-out observations keeps it (4 bytes).
fn id32(index: usize) -> u32 {
    u32::try_from(index).expect("fewer than 2^32 observations")
}

/// Elements per chunk (a power of two, so an index splits with a shift and a mask).
pub const CHUNK: usize = 1 << CHUNK_BITS;
const CHUNK_BITS: u32 = 10;

/// An append-only list of `T` in chunks of [`CHUNK`]; indexed, iterated and compared like a
/// slice.
#[derive(Clone)]
pub struct ObsLog<T> {
    chunks: Vec<Vec<T>>,
    /// Observations recorded, kept or not: the index of the next one.
    len: usize,
    /// Whether an observation was left out (until then an element's index is its position).
    sparse: bool,
    /// Once `sparse`: beside `chunks`, chunk for chunk, each kept element's index among all
    /// observations (4 bytes: a run records fewer than 2^32; its limit on events is lower).
    ids: Vec<Vec<u32>>,
    /// The last observation recorded, if it was left out.
    tail: Option<T>,
    /// How many observations of each kind were left out.
    skipped: BTreeMap<&'static str, u64>,
}

impl<T> Default for ObsLog<T> {
    fn default() -> Self {
        ObsLog::new()
    }
}

impl<T> ObsLog<T> {
    /// An empty log (allocates nothing).
    pub const fn new() -> Self {
        ObsLog {
            chunks: Vec::new(),
            len: 0,
            sparse: false,
            ids: Vec::new(),
            tail: None,
            skipped: BTreeMap::new(),
        }
    }

    /// Appends `item` after the last element, as observation number [`ObsLog::len`].
    pub fn push(&mut self, item: T) {
        let index = self.len;
        let sparse = self.sparse;
        self.tail = None;
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => {
                c.push(item);
                if sparse {
                    self.ids
                        .last_mut()
                        .expect("one list per chunk")
                        .push(id32(index));
                }
            }
            _ => {
                // The first chunk grows on demand (short runs stay small); later ones are
                // allocated at full size once.
                let mut c = if self.chunks.is_empty() {
                    Vec::new()
                } else {
                    Vec::with_capacity(CHUNK)
                };
                c.push(item);
                self.chunks.push(c);
                if sparse {
                    let mut ids = Vec::with_capacity(CHUNK);
                    ids.push(id32(index));
                    self.ids.push(ids);
                }
            }
        }
        self.len += 1;
    }

    /// Leaves out `item`, an observation of `kind`: it takes the next index, no element has
    /// it, and it is counted by kind (and kept only until the next observation, as
    /// [`ObsLog::last_recorded`]).
    pub fn skip(&mut self, kind: &'static str, item: T) {
        if !self.sparse {
            self.sparse = true;
            // From now on positions and indices differ: the elements so far are 0, 1, ...
            self.ids = self
                .chunks
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let mut ids = Vec::with_capacity(c.capacity());
                    ids.extend((0..c.len()).map(|j| id32((k << CHUNK_BITS) + j)));
                    ids
                })
                .collect();
        }
        self.tail = Some(item);
        *self.skipped.entry(kind).or_insert(0) += 1;
        self.len += 1;
    }

    /// The number of observations recorded, kept or left out (the index of the next one).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no observation was recorded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of elements kept (every chunk but the last is full).
    pub fn kept(&self) -> usize {
        match self.chunks.last() {
            Some(last) => (self.chunks.len() - 1) * CHUNK + last.len(),
            None => 0,
        }
    }

    /// How many observations of `kind` were left out.
    pub fn skipped(&self, kind: &str) -> u64 {
        self.skipped.get(kind).copied().unwrap_or(0)
    }

    /// Observation `index` (its place among all the run's observations), if it was kept.
    pub fn get(&self, index: usize) -> Option<&T> {
        if !self.sparse {
            return self
                .chunks
                .get(index >> CHUNK_BITS)
                .and_then(|c| c.get(index & (CHUNK - 1)));
        }
        // The chunk whose first index is the last at or below `index`, then within it.
        let index = u32::try_from(index).ok()?;
        let k = self
            .ids
            .partition_point(|ids| ids.first().is_some_and(|&first| first <= index))
            .checked_sub(1)?;
        let j = self.ids[k].binary_search(&index).ok()?;
        self.chunks[k].get(j)
    }

    /// The kept elements in order, each with its index among all observations.
    pub fn iter_indexed(&self) -> impl DoubleEndedIterator<Item = (usize, &T)> + '_ {
        let sparse = self.sparse;
        self.chunks.iter().enumerate().flat_map(move |(k, c)| {
            c.iter().enumerate().map(move |(j, x)| {
                let index = if sparse {
                    self.ids[k][j] as usize
                } else {
                    (k << CHUNK_BITS) + j
                };
                (index, x)
            })
        })
    }

    /// The last element, if any.
    pub fn last(&self) -> Option<&T> {
        self.chunks.last().and_then(|c| c.last())
    }

    /// The last observation recorded, kept or left out, if any.
    pub fn last_recorded(&self) -> Option<&T> {
        self.tail.as_ref().or_else(|| self.last())
    }

    /// The first element, if any.
    pub fn first(&self) -> Option<&T> {
        self.chunks.first().and_then(|c| c.first())
    }

    /// The elements in order.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            inner: self.chunks.iter().flatten(),
            left: self.kept(),
        }
    }

    /// Sorts the elements by `key`, keeping the order of equal keys (for hand-built logs
    /// that left nothing out).
    pub fn sort_by_key<K: Ord>(&mut self, key: impl FnMut(&T) -> K) {
        assert!(!self.sparse, "sorting a log that left observations out");
        let mut all: Vec<T> = std::mem::take(self).into_iter().collect();
        all.sort_by_key(key);
        *self = all.into_iter().collect();
    }
}

impl<T> Index<usize> for ObsLog<T> {
    type Output = T;
    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(x) => x,
            None => panic!(
                "observation {index} is not in this log ({} of {} kept)",
                self.kept(),
                self.len
            ),
        }
    }
}

/// The elements of an [`ObsLog`] in order.
pub struct Iter<'a, T> {
    inner: std::iter::Flatten<std::slice::Iter<'a, Vec<T>>>,
    left: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;
    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        let x = self.inner.next()?;
        self.left -= 1;
        Some(x)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<T> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let x = self.inner.next_back()?;
        self.left -= 1;
        Some(x)
    }
}

impl<'a, T> IntoIterator for &'a ObsLog<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> IntoIterator for ObsLog<T> {
    type Item = T;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<T>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter().flatten()
    }
}

impl<T> FromIterator<T> for ObsLog<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut log = ObsLog::new();
        for x in items {
            log.push(x);
        }
        log
    }
}

impl<T> From<Vec<T>> for ObsLog<T> {
    fn from(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }
}

impl<T: PartialEq> PartialEq for ObsLog<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && self.skipped == other.skipped
            && self.tail == other.tail
            && self.iter_indexed().eq(other.iter_indexed())
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for ObsLog<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_iterates_and_compares_like_a_vec_across_chunks() {
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7] {
            let v: Vec<usize> = (0..n).map(|i| i * 3).collect();
            let log: ObsLog<usize> = v.clone().into();
            assert_eq!(log.len(), n);
            assert_eq!(log.is_empty(), n == 0);
            assert!(log.iter().eq(v.iter()), "n = {n}");
            assert!(log.iter().rev().eq(v.iter().rev()), "n = {n}");
            assert_eq!(log.iter().len(), n);
            for (i, x) in v.iter().enumerate() {
                assert_eq!(&log[i], x);
            }
            assert_eq!(log.get(n), None);
            assert_eq!(log.last(), v.last());
            assert_eq!(log.first(), v.first());
            assert_eq!(log.clone().into_iter().collect::<Vec<_>>(), v);
            assert_eq!(log, v.iter().copied().collect());
        }
    }

    #[test]
    fn full_chunks_are_allocated_once_at_full_size() {
        let log: ObsLog<u8> = (0..(2 * CHUNK + 1)).map(|i| i as u8).collect();
        assert_eq!(log.chunks.len(), 3);
        assert_eq!(log.chunks[1].capacity(), CHUNK);
        assert_eq!(log.chunks[2].capacity(), CHUNK);
    }

    /// Observations left out keep their indices: the kept ones are found by their index
    /// among all of them, across chunks, and the left-out ones are counted by kind.
    #[test]
    fn a_left_out_observation_keeps_its_index() {
        for n in [1, CHUNK - 1, CHUNK, 3 * CHUNK + 7] {
            // Keep the multiples of 3, after keeping the first 5 (dense until then).
            let mut log: ObsLog<usize> = ObsLog::new();
            for i in 0..n {
                if i < 5 || i % 3 == 0 {
                    log.push(i * 10);
                } else {
                    log.skip(if i % 2 == 0 { "even" } else { "odd" }, i * 10);
                }
            }
            let kept: Vec<usize> = (0..n).filter(|i| *i < 5 || i % 3 == 0).collect();
            assert_eq!(log.len(), n, "n = {n}");
            assert_eq!(log.kept(), kept.len());
            assert_eq!(log.iter().len(), kept.len());
            let pairs: Vec<(usize, usize)> = log.iter_indexed().map(|(i, x)| (i, *x)).collect();
            let want: Vec<(usize, usize)> = kept.iter().map(|&i| (i, i * 10)).collect();
            assert_eq!(pairs, want, "n = {n}");
            for i in 0..n + 2 {
                let want = (i < n && (i < 5 || i % 3 == 0)).then_some(i * 10);
                assert_eq!(log.get(i).copied(), want, "n = {n}, index {i}");
            }
            let odd = (5..n).filter(|i| i % 3 != 0 && i % 2 == 1).count() as u64;
            let even = (5..n).filter(|i| i % 3 != 0 && i % 2 == 0).count() as u64;
            assert_eq!((log.skipped("odd"), log.skipped("even")), (odd, even));
            assert_eq!(log.last_recorded().copied(), Some((n - 1) * 10));
            assert_eq!(log.last().copied(), kept.last().map(|i| i * 10));
        }
        // Left out before anything was kept.
        let mut log: ObsLog<u8> = ObsLog::new();
        log.skip("x", 0);
        log.push(1);
        assert_eq!(log.get(0), None);
        assert_eq!(log.get(1), Some(&1));
        assert_eq!(log.last_recorded(), Some(&1));
    }

    #[test]
    fn sort_by_key_is_stable() {
        let mut log: ObsLog<(u8, usize)> = (0..(CHUNK + 5)).map(|i| ((i % 3) as u8, i)).collect();
        log.sort_by_key(|x| x.0);
        let v: Vec<(u8, usize)> = log.iter().copied().collect();
        let mut want: Vec<(u8, usize)> = (0..(CHUNK + 5)).map(|i| ((i % 3) as u8, i)).collect();
        want.sort_by_key(|x| x.0);
        assert_eq!(v, want);
    }
}
