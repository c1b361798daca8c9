//! Finds where a field path (`faults[2].pause`) sits in a JSON text, so errors found after
//! parsing (an unknown node name, a fault after the duration) still name a line and column.

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// Renders a path as `faults[2].pause` (the empty path is `(root)`).
pub fn render(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    if s.is_empty() {
        "(root)".into()
    } else {
        s
    }
}

/// The 1-based line and column of the value at `path` in `src`, or of the deepest prefix of
/// the path that exists.
pub fn locate(src: &str, path: &[Seg]) -> (usize, usize) {
    let b = src.as_bytes();
    let mut pos = skip_ws(b, 0);
    for seg in path {
        match find_child(b, pos, seg) {
            Some(p) => pos = p,
            None => break,
        }
    }
    line_col(src, pos)
}

/// Byte offset of the value at `path` in `src` and just past it, if the whole path exists.
pub fn value_span(src: &str, path: &[Seg]) -> Option<(usize, usize)> {
    let b = src.as_bytes();
    let mut pos = skip_ws(b, 0);
    for seg in path {
        pos = find_child(b, pos, seg)?;
    }
    Some((pos, skip_value(b, pos)?))
}

/// The 1-based line and column of the `nth` (0-based) occurrence of `key` as a member name of
/// the object at `path` (its opening quote), if there is one: where a repeated key is.
pub fn locate_key(src: &str, path: &[Seg], key: &str, nth: usize) -> Option<(usize, usize)> {
    let b = src.as_bytes();
    let mut pos = skip_ws(b, 0);
    for seg in path {
        pos = find_child(b, pos, seg)?;
    }
    if b.get(pos) != Some(&b'{') {
        return None;
    }
    let mut seen = 0;
    let mut i = skip_ws(b, pos + 1);
    while i < b.len() && b[i] != b'}' {
        let (after_key, k) = scan_string(b, i)?;
        if k == key {
            if seen == nth {
                return Some(line_col(src, i));
            }
            seen += 1;
        }
        let v = skip_ws(b, skip_ws(b, after_key) + 1);
        i = skip_ws(b, skip_value(b, v)?);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    None
}

/// 1-based line and column of byte offset `pos`.
pub fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(src.len());
    let before = &src[..pos];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] as char).is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Position just past the string starting at `i` (which is a `"`), and its raw contents.
fn scan_string(b: &[u8], i: usize) -> Option<(usize, String)> {
    let mut j = i + 1;
    let mut out = Vec::new();
    while j < b.len() {
        match b[j] {
            b'\\' => {
                if j + 1 < b.len() {
                    out.push(b[j + 1]);
                }
                j += 2;
            }
            b'"' => return Some((j + 1, String::from_utf8_lossy(&out).into_owned())),
            c => {
                out.push(c);
                j += 1;
            }
        }
    }
    None
}

/// Position just past the value starting at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => scan_string(b, i).map(|(j, _)| j),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = scan_string(b, j)?.0;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len()
                && !matches!(b[j], b',' | b'}' | b']')
                && !(b[j] as char).is_ascii_whitespace()
            {
                j += 1;
            }
            Some(j)
        }
    }
}

fn find_child(b: &[u8], pos: usize, seg: &Seg) -> Option<usize> {
    match (b.get(pos)?, seg) {
        (b'{', Seg::Key(key)) => {
            let mut i = skip_ws(b, pos + 1);
            while i < b.len() && b[i] != b'}' {
                let (after_key, k) = scan_string(b, i)?;
                let colon = skip_ws(b, after_key);
                let v = skip_ws(b, colon + 1);
                if &k == key {
                    return Some(v);
                }
                let end = skip_value(b, v)?;
                i = skip_ws(b, end);
                if b.get(i) == Some(&b',') {
                    i = skip_ws(b, i + 1);
                }
            }
            None
        }
        (b'[', Seg::Index(n)) => {
            let mut i = skip_ws(b, pos + 1);
            let mut k = 0;
            while i < b.len() && b[i] != b']' {
                if k == *n {
                    return Some(i);
                }
                let end = skip_value(b, i)?;
                i = skip_ws(b, end);
                if b.get(i) == Some(&b',') {
                    i = skip_ws(b, i + 1);
                }
                k += 1;
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_values() {
        let src = "{\n  \"a\": {\"b\": [1, {\"c\": \"x\\\"}\"}]},\n  \"d\": 2\n}";
        let p = |v: &[Seg]| locate(src, v);
        assert_eq!(p(&[Seg::Key("d".into())]), (3, 8));
        assert_eq!(
            p(&[
                Seg::Key("a".into()),
                Seg::Key("b".into()),
                Seg::Index(1),
                Seg::Key("c".into())
            ]),
            (2, 24)
        );
        // The second `d` of an object, and a value's span.
        let twice = "{\"n\": {\"d\": 1,\n  \"d\": 2}}";
        let n = [Seg::Key("n".into())];
        assert_eq!(locate_key(twice, &n, "d", 1), Some((2, 3)));
        assert_eq!(locate_key(twice, &n, "d", 2), None);
        assert_eq!(
            value_span(twice, &[n[0].clone(), Seg::Key("d".into())]),
            Some((12, 13))
        );
        // A missing tail stops at the deepest existing prefix.
        assert_eq!(p(&[Seg::Key("a".into()), Seg::Key("zz".into())]), (2, 8));
        assert_eq!(
            render(&[
                Seg::Key("faults".into()),
                Seg::Index(2),
                Seg::Key("pause".into())
            ]),
            "faults[2].pause"
        );
    }
}
