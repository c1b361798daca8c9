//! [`ObsLog`]: the run's observations, appended in order and never moved.
//!
//! A `Vec` that grows by doubling copies every element at each growth and, at that instant,
//! holds the old and the new buffer: a run of lesson 15 lasting 3,000 s (32,000 observations
//! of 104 bytes) peaked at 5 MB for 3.3 MB of observations, and the allocator kept the freed
//! buffers' pages resident (issue 11 §4, memory flat in run length). The log keeps its
//! elements in chunks of [`CHUNK`] that are allocated once at full size (the first grows like
//! a `Vec`, so a short run pays for what it records): appending never copies, and the most it
//! holds beyond its elements is one partly filled chunk.

use std::ops::Index;

/// Elements per chunk (a power of two, so an index splits with a shift and a mask).
pub const CHUNK: usize = 1 << CHUNK_BITS;
const CHUNK_BITS: u32 = 10;

/// An append-only list of `T` in chunks of [`CHUNK`]; indexed, iterated and compared like a
/// slice.
#[derive(Clone)]
pub struct ObsLog<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
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
        }
    }

    /// Appends `item` after the last element.
    pub fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(item),
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
            }
        }
        self.len += 1;
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&T> {
        self.chunks
            .get(index >> CHUNK_BITS)
            .and_then(|c| c.get(index & (CHUNK - 1)))
    }

    /// The last element, if any.
    pub fn last(&self) -> Option<&T> {
        self.chunks.last().and_then(|c| c.last())
    }

    /// The first element, if any.
    pub fn first(&self) -> Option<&T> {
        self.chunks.first().and_then(|c| c.first())
    }

    /// The elements in order.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            inner: self.chunks.iter().flatten(),
            left: self.len,
        }
    }

    /// Sorts the elements by `key`, keeping the order of equal keys (for hand-built logs).
    pub fn sort_by_key<K: Ord>(&mut self, key: impl FnMut(&T) -> K) {
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
            None => panic!("index {index} out of range for a log of {}", self.len),
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
        self.len == other.len && self.iter().eq(other.iter())
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
