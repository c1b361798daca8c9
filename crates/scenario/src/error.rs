//! Scenario errors: every one names the file, line, column and field path, and says what was
//! expected.

use std::fmt;

/// One located problem in a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// Field path, e.g. `faults[2].pause`.
    pub path: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{file}: cannot read the scenario: {}", io_reason(.error, .file))]
    Io {
        /// The file.
        file: String,
        /// The cause (shown in the message, so not chained as a source).
        error: std::io::Error,
    },
    /// The file is not a valid scenario.
    #[error("{}", render_problems(.file, .problems))]
    Invalid {
        /// The file.
        file: String,
        /// Every problem found (at least one), in file order.
        problems: Vec<Problem>,
    },
}

/// Why a scenario file could not be read, in words: a folder given where a file goes is said
/// to be one ("Is a directory (os error 21)" was all it said).
fn io_reason(e: &std::io::Error, file: &str) -> String {
    if std::path::Path::new(file).is_dir() {
        return format!(
            "it is a folder, not a scenario file (`splitbrain check {file}` runs every scenario \
             in a folder)"
        );
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        _ => e.to_string(),
    }
}

fn render_problems(file: &str, problems: &[Problem]) -> String {
    let mut s = String::new();
    for (i, p) in problems.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&format!(
            "{file}:{}:{}: {}: {}",
            p.line,
            p.column,
            shown_path(&p.path),
            p.message
        ));
    }
    s
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.line,
            self.column,
            shown_path(&self.path),
            self.message
        )
    }
}

/// A field path as an error shows it: a key from the file (a node name that is refused) may
/// hold controls or bidi overrides, written as `\u{..}` escapes so a terminal shows the text
/// as it is and in its order.
fn shown_path(path: &str) -> String {
    path.chars()
        .map(|c| {
            let bidi = matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if c.is_control() || bidi {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// serde_json's message for `e` without its " at line L column C" tail, for a line of a JSON
/// Lines file (where serde's line is the line within the line): the column follows the
/// reason, and the caller names the file's line once.
pub fn json_line_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = text.rfind(" at line ").map_or(&*text, |i| &text[..i]);
    // serde quotes the input it refuses (`unknown variant `...``): a long one is cut.
    let text = cut_chars(text, MAX_QUOTED_CHARS);
    if e.column() == 0 {
        text.to_string()
    } else {
        format!("{text} (column {})", e.column())
    }
}

/// Most characters of input an error message repeats; the rest is cut (see [`cut_chars`]).
pub const MAX_QUOTED_CHARS: usize = 200;

/// `text` when it has at most `max` characters, else its first `max` characters followed by
/// "... (N characters in all)": a message never repeats a huge input in full.
pub fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((i, _)) => format!(
            "{}... ({} characters in all)",
            &text[..i],
            text.chars().count()
        ),
    }
}

/// Longest word or candidate, in characters, that [`did_you_mean`] compares: edit distance
/// costs the product of the lengths, so a 100,000-character node name against another would
/// take minutes, and nobody mistypes a name that long.
pub const MAX_SUGGEST_CHARS: usize = 256;

/// The candidate closest to `word` by edit distance, if it is close enough to be a typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = word.chars().count();
    if len > MAX_SUGGEST_CHARS {
        return None;
    }
    candidates
        .into_iter()
        .filter_map(|c| {
            let max = 2.max(c.len() / 4);
            let c_len = c.chars().count();
            // The distance is at least the difference in length: skip hopeless candidates
            // before paying for the distance.
            if c_len > MAX_SUGGEST_CHARS || c_len.abs_diff(len) > max {
                return None;
            }
            let d = strsim::damerau_levenshtein(word, c);
            (d <= max && d < c.len()).then_some((d, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Appends "did you mean `x`?" to a serde message of the form
/// "unknown field `ttll`, expected one of `ttl`, ..." or "unknown variant ...".
pub fn with_suggestion(message: &str) -> String {
    let message = &in_plain_words(message);
    let ticked: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    if (message.starts_with("unknown field") || message.starts_with("unknown name"))
        && ticked.len() > 1
    {
        if let Some(best) = did_you_mean(ticked[0], ticked[1..].iter().copied()) {
            return format!("{message}; did you mean `{best}`?");
        }
    }
    message.to_string()
}

/// serde's message with Rust's type names said in the scenario format's words: "invalid
/// type: null, expected struct FaultSpec" is "found null, expected an object"; `u32` is an
/// integer in its range, `i64` an integer, `f64` a number, "a sequence" a list `[...]`,
/// "a map" and any struct or enum an object `{...}`, "an array of length 2" a list of 2
/// entries; serde_json's bare "expected value" (a syntax error) says what a value is.
///
/// Long because it is a table of serde's phrases and the plain words for each.
pub fn in_plain_words(message: &str) -> String {
    match message {
        "expected value" => {
            return "expected a value: a string `\"...\"`, a number, an object `{...}`, a list \
                    `[...]`, true, false or null"
                .to_string()
        }
        "expected ident" => {
            return "expected true, false or null (text needs double quotes: `\"...\"`)".to_string()
        }
        "key must be a string" => {
            return "a key must be a string in double quotes: `\"key\": value`".to_string()
        }
        "control character (\\u0000-\\u001F) found while parsing a string" => {
            return "a string cannot hold a line break, tab or other control character as is: \
                    write it as `\\n`, `\\t` or `\\u00XX`"
                .to_string()
        }
        "invalid escape" => {
            return "unknown escape in a string: JSON knows `\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, \
                    `\\n`, `\\r`, `\\t` and `\\uXXXX`"
                .to_string()
        }
        "recursion limit exceeded" => {
            return "nested too deeply: at most 128 levels of lists and objects".to_string()
        }
        "trailing characters" => {
            return "unexpected text after the value: a comma or a closing bracket or brace \
                    should come next"
                .to_string()
        }
        _ => {}
    }
    // serde's "variant" is a name of the format's (a role, a lock kind, an invariant).
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        return format!("unknown name {rest}");
    }
    let Some((head, expected)) = message.rsplit_once(", expected ") else {
        return message.to_string();
    };
    let said = match expected {
        "u8" => format!("an integer in 0..={}", u8::MAX),
        "u16" => format!("an integer in 0..={}", u16::MAX),
        "u32" => format!("an integer in 0..={}", u32::MAX),
        "u64" | "usize" => format!("an integer in 0..={}", u64::MAX),
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a sequence" => "a list `[...]`".to_string(),
        "a map" => "an object `{...}`".to_string(),
        "variant identifier" | "field identifier" => "a name, as a string `\"...\"`".to_string(),
        "fewer elements in array" | "fewer elements in map" => "fewer entries".to_string(),
        "newtype variant" | "struct variant" | "tuple variant" => {
            "an object of one key `{\"NAME\": ...}`".to_string()
        }
        "unit variant" => "a name, as a string `\"...\"`".to_string(),
        e if e.starts_with("struct ")
            || e.starts_with("internally tagged enum ")
            || e.starts_with("enum ") =>
        {
            "an object `{...}`".to_string()
        }
        e => match e
            .strip_prefix("an array of length ")
            .or_else(|| e.strip_prefix("a tuple of size "))
        {
            Some(n) => format!("a list of {n} entries `[...]`"),
            None => e.to_string(),
        },
    };
    let head = head
        .replace("invalid type: map", "invalid type: an object")
        .replace("invalid type: sequence", "invalid type: a list")
        .replace("invalid type: unit variant", "invalid type: a name alone")
        .replace(
            "invalid type: newtype variant",
            "invalid type: an object of one key",
        );
    // "invalid length 3" is serde's count of a list's entries.
    let head = match head.strip_prefix("invalid length ") {
        Some(n) if n.parse::<usize>().is_ok() => {
            format!(
                "found a list of {n} {}",
                if n == "1" { "entry" } else { "entries" }
            )
        }
        _ => head,
    };
    // "invalid type: string \"3\", expected ..." is said as the shape check says it: what is
    // expected, then what was found.
    if let Some(kind) = head.strip_prefix("invalid type: ") {
        return format!("expected {said}, found {}", found_words(kind));
    }
    format!("{head}, expected {said}")
}

/// serde's name of a value's kind, as found in a file (`string "3"`, `integer \`5\``), in
/// the format's words (`the string "3"`, `the integer 5`).
pub(crate) fn found_words(kind: &str) -> String {
    let ticked = |prefix: &str| {
        kind.strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('`')?.strip_suffix('`'))
    };
    if let Some(s) = kind.strip_prefix("string ") {
        format!("the string {s}")
    } else if let Some(n) = ticked("integer ") {
        format!("the integer {n}")
    } else if let Some(n) = ticked("floating point ") {
        format!("the number {n}")
    } else if let Some(b) = ticked("boolean ") {
        b.to_string()
    } else {
        match kind {
            "a list" => "a list `[...]`".to_string(),
            "an object" => "an object `{...}`".to_string(),
            k => k.to_string(),
        }
    }
}

/// `word` as one word of a POSIX shell command line: as it is when every character is
/// plain (ASCII letters, digits, `._-+=,:/@%`), else in single quotes with each `'` written
/// `'\''`. Used for the commands splitbrain prints to be pasted (reproduce lines): a file
/// named `my scen's.json` is `'my scen'\''s.json'`.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+=,:/@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_type_names_are_said_in_the_formats_words() {
        let said = |m: &str| with_suggestion(m);
        assert_eq!(
            said("invalid type: string \"one\", expected u32"),
            "expected an integer in 0..=4294967295, found the string \"one\""
        );
        assert_eq!(
            said("invalid type: null, expected struct FaultSpec"),
            "expected an object `{...}`, found null"
        );
        assert_eq!(
            said("invalid type: integer `5`, expected internally tagged enum NodeSpec"),
            "expected an object `{...}`, found the integer 5"
        );
        assert_eq!(
            said("invalid type: string \"single_leader\", expected a sequence"),
            "expected a list `[...]`, found the string \"single_leader\""
        );
        assert_eq!(
            said("invalid type: sequence, expected a duration"),
            "expected a duration, found a list `[...]`"
        );
        // serde's rarer words, in the format's.
        assert_eq!(
            said("invalid length 0, expected an array of length 2"),
            "found a list of 0 entries, expected a list of 2 entries `[...]`"
        );
        assert_eq!(
            said("invalid length 3, expected fewer elements in array"),
            "found a list of 3 entries, expected fewer entries"
        );
        assert_eq!(
            said("invalid type: integer `5`, expected variant identifier"),
            "expected a name, as a string `\"...\"`, found the integer 5"
        );
        assert!(said("expected value").starts_with("expected a value: a string"));
        assert!(said("expected ident").starts_with("expected true, false or null"));
        assert!(said("key must be a string").starts_with("a key must be a string in double"));
        assert_eq!(
            said("invalid type: unit variant, expected newtype variant"),
            "expected an object of one key `{\"NAME\": ...}`, found a name alone"
        );
        assert_eq!(
            said("invalid type: map, expected f64"),
            "expected a number, found an object `{...}`"
        );
        // serde's "unknown variant" is a name of the format's.
        assert_eq!(
            said("unknown variant `bullly`, expected one of `bully`, `worker`"),
            "unknown name `bullly`, expected one of `bully`, `worker`; did you mean `bully`?"
        );
    }

    #[test]
    fn suggestions_for_typos_only() {
        assert_eq!(
            did_you_mean("bullly", ["bully", "worker", "redis"]),
            Some("bully")
        );
        assert_eq!(
            did_you_mean("clinet-1", ["client-1", "client-2"]),
            Some("client-1")
        );
        assert_eq!(did_you_mean("zzz", ["bully", "worker"]), None);
        // Two 100,000-character names are not compared (that would take minutes).
        let long_a = "z".repeat(100_000);
        let long_b = "y".repeat(100_000);
        assert_eq!(did_you_mean(&long_a, [long_b.as_str(), "bully"]), None);
        assert_eq!(
            did_you_mean("bullly", [long_b.as_str(), "bully"]),
            Some("bully")
        );
        assert_eq!(
            with_suggestion("unknown field `ttll`, expected one of `ttl`, `count`"),
            "unknown field `ttll`, expected one of `ttl`, `count`; did you mean `ttl`?"
        );
    }
}
