//! Reading a scenario file: JSON parsing with field paths, then validation, all errors located.

use crate::error::{with_suggestion, Problem, ScenarioError};
use crate::locate::{line_col, locate, locate_key, render, value_span, Seg};
use crate::plan::Plan;
use crate::registry::RoleRegistry;
use crate::schema::{NodeSpec, Scenario};
use crate::validate::validate;
use std::path::Path;

/// Reads and validates the scenario at `path`.
pub fn load_file(path: &Path) -> Result<Plan, ScenarioError> {
    let file = path.display().to_string();
    let src = read_scenario(path)?;
    load_str(&file, &src)
}

/// Reads the text of the scenario file at `path`. A file that is not UTF-8 is a located
/// error at its first bad byte (line and column), not a bare "invalid UTF-8".
pub fn read_scenario(path: &Path) -> Result<String, ScenarioError> {
    let file = path.display().to_string();
    read_json_text(path, "scenario").map_err(|e| match e {
        ReadError::Io(error) => ScenarioError::Io { file, error },
        ReadError::Invalid(problem) => ScenarioError::Invalid {
            file,
            problems: vec![problem],
        },
    })
}

/// Why a JSON text file could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The file system refused.
    Io(std::io::Error),
    /// The bytes are not UTF-8 (located at the first bad byte).
    Invalid(Problem),
}

/// Refuses a file that is not a regular file, before it is opened: a FIFO would block the
/// read forever, a device would be read without end. The error (kind `InvalidInput`) says what
/// the file is: "it is a FIFO (named pipe), not a regular file". Links are followed; a missing
/// file or a folder passes (the read names those). A path through a file (`t.jsonl/`, a
/// trailing slash) is said so: "t.jsonl is a file, not a folder (the
/// path ends in /)", not the OS's "Not a directory (os error 20)"; its kind stays the OS's.
pub fn check_regular(path: &Path) -> std::io::Result<()> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        // ENOTDIR is 20 on Linux, macOS and the BSDs (`ErrorKind::NotADirectory` is newer
        // than the workspace's minimum Rust).
        Err(e) if cfg!(unix) && e.raw_os_error() == Some(20) => {
            return Err(std::io::Error::new(e.kind(), through_a_file(path)));
        }
        Err(_) => return Ok(()),
    };
    let t = meta.file_type();
    if t.is_file() || t.is_dir() {
        return Ok(());
    }
    // Only Unix names the other kinds (on wasm32 and Windows every other kind is "not a
    // regular file").
    #[cfg(unix)]
    let what = {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            "a FIFO (named pipe)"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        }
    };
    #[cfg(not(unix))]
    let what = "not a regular file";
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {what}, not a regular file"),
    ))
}

/// Why `path`, which the OS says goes through something that is not a folder, cannot be
/// read: names the first file on the way ("runs/t.jsonl is a file, not a folder").
fn through_a_file(path: &Path) -> String {
    let mut prefix = std::path::PathBuf::new();
    for c in path.components() {
        prefix.push(c);
        if std::fs::metadata(&prefix).is_ok_and(|m| !m.is_dir()) {
            let slash = if prefix.components().count() == path.components().count() {
                " (the path ends in /)"
            } else {
                ""
            };
            return format!("{} is a file, not a folder{slash}", prefix.display());
        }
    }
    "a part of the path is a file, not a folder".to_string()
}

/// Reads the text of the JSON file at `path`; `noun` ("scenario") names what it should be.
/// Every JSON input (scenarios, comparison manifests and their designs) is read here, so each
/// command refuses a FIFO or device ([`check_regular`]) instead of hanging on it.
pub(crate) fn read_json_text(path: &Path, noun: &str) -> Result<String, ReadError> {
    check_regular(path).map_err(ReadError::Io)?;
    let bytes = std::fs::read(path).map_err(ReadError::Io)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let good = std::str::from_utf8(&bytes[..at]).expect("valid up to here");
        let (line, column) = line_col(good, good.len());
        ReadError::Invalid(Problem {
            line,
            column,
            path: "(encoding)".to_string(),
            message: format!(
                "the file is not UTF-8 text: byte 0x{:02x} cannot start or continue a \
                 character (a {noun} is a JSON text file)",
                bytes[at]
            ),
        })
    })
}

/// `src` without a leading UTF-8 byte order mark, which some editors write and JSON parsers
/// refuse; the mark is invisible, so columns stay as an editor shows them.
pub fn without_bom(src: &str) -> &str {
    src.strip_prefix('\u{feff}').unwrap_or(src)
}

/// Parses and validates scenario text of the built-in roles; `file` names it in errors.
pub fn load_str(file: &str, src: &str) -> Result<Plan, ScenarioError> {
    load_str_with(&RoleRegistry::builtin(), file, src)
}

/// Parses and validates scenario text whose nodes play any role of `roles`; `file` names it
/// in errors.
pub fn load_str_with(roles: &RoleRegistry, file: &str, src: &str) -> Result<Plan, ScenarioError> {
    let src = without_bom(src);
    let invalid = |problems| ScenarioError::Invalid {
        file: file.to_string(),
        problems,
    };
    let mut scenario = parse(file, src)?;
    roles.resolve(&mut scenario, src).map_err(invalid)?;
    let mut plan = validate(scenario, src).map_err(invalid)?;
    plan.roles = roles.clone();
    Ok(plan)
}

/// Parses without semantic validation.
/// The format's shapes are checked first ([`crate::shape`]): a list where an object goes, a
/// list past its limit.
pub fn parse(file: &str, src: &str) -> Result<Scenario, ScenarioError> {
    let invalid = |problem| ScenarioError::Invalid {
        file: file.to_string(),
        problems: vec![manifest_not_scenario(file, without_bom(src)).unwrap_or(problem)],
    };
    if not_an_object(without_bom(src), "scenario").is_none() {
        if let Some(problem) = crate::shape::check(without_bom(src)) {
            return Err(invalid(older_form(file, without_bom(src), problem)));
        }
    }
    parse_json(src, "scenario", &|src, path| {
        refine_node_error(src, path).or_else(|| seed_range_hint(src, path, "rate_seeds"))
    })
    .map_err(invalid)
}

/// A shape problem where a file of an older format version wrote an older form: format 1
/// read a nemesis's `pause`, `crash` and `partition` bounds as `[min, max]` too. The problem
/// gains what the form meant and the `splitbrain migrate FILE` that rewrites it.
fn older_form(file: &str, src: &str, mut problem: Problem) -> Problem {
    /// Only the version is read; every other field is skipped.
    #[derive(serde::Deserialize)]
    struct Version {
        splitbrain: Option<u64>,
    }
    let version = serde_json::from_str::<Version>(src)
        .ok()
        .and_then(|v| v.splitbrain);
    let bounds = ["nemesis.pause", "nemesis.crash", "nemesis.partition"];
    let pair = || {
        matches!(crate::vary::value_at(src, &problem.path),
            Some(crate::vary::Json::Array(items)) if items.len() == 2)
    };
    if version.is_some_and(|v| v < u64::from(crate::format::CURRENT))
        && bounds.contains(&problem.path.as_str())
        && pair()
    {
        problem.message = format!(
            "{}: format {} read `[min, max]` here; format {} writes {{\"min\": .., \"max\": ..}}. \
             `splitbrain migrate {}` rewrites the file to format {} with its meaning kept",
            problem.message,
            version.unwrap_or(1),
            crate::format::CURRENT,
            crate::vary::shell_word(file),
            crate::format::CURRENT
        );
    }
    problem
}

/// A seed range written as a JSON number or list where its text goes (`"rate_seeds": 5`, a
/// manifest's `"seeds": [0, 100]`): says to quote it, with the forms a range takes. `field`
/// is the top-level key that holds a seed range.
pub(crate) fn seed_range_hint(src: &str, path: &[Seg], field: &str) -> Option<(Vec<Seg>, String)> {
    let [Seg::Key(key)] = path else {
        return None;
    };
    if key != field {
        return None;
    }
    let root: serde_json::Value = serde_json::from_str(src).ok()?;
    let (found, n) = match root.get(field)? {
        serde_json::Value::Number(n) => match n.as_u64() {
            Some(n) => (format!("the integer {n}"), n),
            None => (format!("the number {n}"), 100),
        },
        serde_json::Value::Array(_) => ("a list `[...]`".to_string(), 100),
        _ => return None,
    };
    // The examples end at the number written (at 1 for 0, so the range is not empty).
    let end = n.max(1);
    Some((
        path.to_vec(),
        format!(
            "expected a seed range as a string in quotes: \"0..{end}\" ({end} seeds, 0 to \
             {last}), \"0..={end}\" (0 to {end} included) or \"{n}\" (seed {n} alone); found \
             {found}",
            last = end - 1
        ),
    ))
}

/// A comparison manifest read as a scenario (its name lacks the `.compare.json` suffix):
/// serde would name the first field a scenario does not have; say what the file is instead.
fn manifest_not_scenario(file: &str, src: &str) -> Option<Problem> {
    use crate::compare::MANIFEST_SUFFIX;
    if !crate::compare::is_manifest_text(src) {
        return None;
    }
    let (line, column) = locate_key(src, &[], "splitbrain_compare", 0)?;
    let message = if file.ends_with(MANIFEST_SUFFIX) {
        // Named as a manifest, but given where a scenario goes (a manifest's design).
        "this is a comparison manifest, not a scenario: `splitbrain compare` runs it".to_string()
    } else {
        format!(
            "this is a comparison manifest, not a scenario: a manifest's file name must end in \
             {MANIFEST_SUFFIX} (then `splitbrain compare FILE` runs it, `check` skips it and \
             `report` writes its page)"
        )
    };
    Some(Problem {
        line,
        column,
        path: "splitbrain_compare".to_string(),
        message,
    })
}

/// Finds a better path and message for a data error serde reports at `path`, if it can.
pub(crate) type Refine = dyn Fn(&str, &[Seg]) -> Option<(Vec<Seg>, String)>;

/// Parses `src` as one JSON object of type `T` (a `noun`: "scenario", "comparison manifest"),
/// the error located at its line and column with its field path: a repeated key at its second
/// occurrence, an unknown field at its key, an integer out of range with the range and the
/// number as written.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    src: &str,
    noun: &str,
    refine: &Refine,
) -> Result<T, Problem> {
    let src = without_bom(src);
    if let Some(problem) = not_an_object(src, noun) {
        return Err(problem);
    }
    let de = &mut serde_json::Deserializer::from_str(src);
    let err = match serde_path_to_error::deserialize::<_, T>(&mut *de) {
        Ok(s) => {
            return match de.end() {
                Ok(()) => Ok(s),
                Err(e) => Err(Problem {
                    line: e.line(),
                    column: e.column().max(1),
                    path: format!("(after the {noun})"),
                    message: format!(
                        "unexpected text after the {noun}'s closing brace: a file holds one \
                         JSON object"
                    ),
                }),
            }
        }
        Err(err) => err,
    };
    let mut path: Vec<Seg> =
        err.path()
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => None,
            })
            .collect();
    let inner = err.inner();
    if inner.is_data() {
        if let Some((path, message)) = refine(src, &path) {
            let (line, column) = locate(src, &path);
            let message = integer_range(src, &path, &message).unwrap_or(message);
            return Err(Problem {
                line,
                column,
                path: render(&path),
                message: with_suggestion(&message),
            });
        }
    }
    // serde_json appends " at line L column C"; we print the location ourselves.
    let raw = inner.to_string();
    let message = match raw.rfind(" at line ") {
        Some(i) => raw[..i].to_string(),
        None => raw,
    };
    // A list or map past its limit, refused by its bounded reader at the first entry past it.
    if let Some((entry, message)) = crate::schema::limits::past_limit(&message) {
        path.push(entry);
        let (line, column) = locate(src, &path);
        return Err(Problem {
            line,
            column,
            path: render(&path),
            message,
        });
    }
    // A key given twice: the path names the key, the location its second occurrence.
    // serde reports "duplicate field `k`" for a struct's field, `unique_keys` "`k` is defined
    // twice" for a map's key; both at the object's path.
    let repeated = message
        .strip_prefix("duplicate field `")
        .and_then(|rest| rest.split('`').next())
        .or_else(|| {
            message
                .strip_prefix('`')
                .and_then(|rest| rest.split_once("` is defined twice"))
                .map(|(k, _)| k)
        })
        .map(str::to_string);
    // An unknown field inside a buffered (tagged) object is reported by serde_json at the
    // object's end: point at the offending key instead.
    let unknown_key = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
        .map(|k| Seg::Key(k.to_string()));
    let (line, column) = if let Some(key) = &repeated {
        let at = locate_key(src, &path, key, 1);
        path.push(Seg::Key(key.clone()));
        at.unwrap_or_else(|| locate(src, &path))
    } else if let Some(key) = unknown_key {
        locate(src, &[path.clone(), vec![key]].concat())
    } else if inner.line() > 0 {
        (inner.line(), inner.column().max(1))
    } else {
        locate(src, &path)
    };
    let message = if inner.is_eof() {
        "unexpected end of file: the JSON is incomplete".to_string()
    } else if let (Some(key), true) = (&repeated, message.starts_with("duplicate field")) {
        format!("`{key}` is given twice in this object: give each field once")
    } else if let Some(m) = integer_range(src, &path, &message) {
        m
    } else {
        with_suggestion(&message)
    };
    let path = if path.is_empty() && inner.is_syntax() {
        "(syntax)".to_string()
    } else {
        render(&path)
    };
    let (line, column) = if line == 0 {
        line_col(src, src.len())
    } else {
        (line, column)
    };
    Err(Problem {
        line,
        column,
        path,
        message,
    })
}

/// serde's "invalid type: floating point `1.8446744073709552e+19`, expected u64" (a number
/// past the type's range is read as a float) or "invalid value: integer `-1`, expected u32",
/// said as what is expected: an integer in the type's range, and the number as written.
///
/// A value of another kind where such an integer goes (`"count": "3"`) keeps serde's "invalid
/// type: string \"3\"" but states the field's range, not its type's (`0..=4294967295` for a
/// count of 1..=10000). An integer too large for 64 bits, where any other number or text goes
/// (a duration), is said as such, not as the float serde read it as.
fn integer_range(src: &str, path: &[Seg], message: &str) -> Option<String> {
    let float = message.starts_with("invalid type: floating point `");
    let other_kind = message.starts_with("invalid type: ") && !float;
    if !(float || other_kind || message.starts_with("invalid value: integer `")) {
        return None;
    }
    let (head, expected) = message.rsplit_once(", expected ")?;
    let found = match value_span(src, path) {
        Some((a, b)) => src[a..b].to_string(),
        None => message.split('`').nth(1)?.to_string(),
    };
    let max = match expected {
        "u8" => u64::from(u8::MAX),
        "u16" => u64::from(u16::MAX),
        "u32" => u64::from(u32::MAX),
        "u64" | "usize" => u64::MAX,
        _ => {
            let plain = crate::error::in_plain_words(message);
            let expected = plain
                .rsplit_once(", expected ")
                .map_or(expected, |(_, e)| e);
            return (float && is_integer_text(&found)).then(|| {
                format!(
                    "found the integer {found}, which is past the largest this field takes \
                     ({}); expected {expected}",
                    u64::MAX
                )
            });
        }
    };
    let (min, max) = field_range(path, max).unwrap_or((0, max));
    if other_kind {
        let kind = head.strip_prefix("invalid type: ").unwrap_or(head);
        let found = crate::error::in_plain_words(&format!("invalid type: {kind}, expected u8"));
        let found = found.rsplit_once(", found ").map_or(kind, |(_, f)| f);
        return Some(format!(
            "expected an integer in {min}..={max}, found {found}"
        ));
    }
    Some(format!(
        "expected an integer in {min}..={max}, found {found}"
    ))
}

/// Whether `text` is an integer as written: digits, after an optional `-`. serde_json reads
/// one too large for 64 bits as a float, which is how such a number is recognised.
pub(crate) fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The range the format states for the integer at `path` ([`crate::shape::integer_bounds`],
/// from the schema's `minimum`/`maximum`), where it is narrower than its type's `0..=max`:
/// `count` is 1..=10000, and 0 is refused by `max_events`, `rounds`, `nth` and every other
/// field that counts something that must happen.
fn field_range(path: &[Seg], type_max: u64) -> Option<(u64, u64)> {
    let (min, max) = crate::shape::integer_bounds(path)?;
    let min = min.filter(|m| *m > 0.0).map_or(0, |m| m as u64);
    let max = max.map_or(type_max, |m| (m as u64).min(type_max));
    Some((min, max))
}

/// The problem with `src` when its top-level value is a JSON value other than an object (an
/// array, a string, a number...): serde would report it as a struct of 21 elements.
fn not_an_object(src: &str, noun: &str) -> Option<Problem> {
    let start = src.len() - src.trim_start().len();
    let first = src[start..].chars().next()?;
    let found = match first {
        '{' => return None,
        '[' => "an array",
        '"' => "a string",
        't' | 'f' => "a boolean",
        'n' => "null",
        '-' | '0'..='9' => "a number",
        // Not JSON at all: the parser names the syntax error.
        _ => return None,
    };
    let (line, column) = line_col(src, start);
    Some(Problem {
        line,
        column,
        path: "(root)".to_string(),
        message: format!("a {noun} file holds one JSON object `{{ ... }}`, found {found}"),
    })
}

/// A node object is deserialised through its `role` tag, which buffers it: serde then reports
/// a bad field (`"count": -1`) at the node, not at the field. Deserialising the node again as
/// its role's own struct finds the field path, so the error can point at it.
fn refine_node_error(src: &str, path: &[Seg]) -> Option<(Vec<Seg>, String)> {
    let [Seg::Key(nodes), Seg::Key(name)] = path else {
        return None;
    };
    if nodes != "nodes" {
        return None;
    }
    let root: serde_json::Value = serde_json::from_str(src).ok()?;
    let mut node = root.get("nodes")?.get(name)?.clone();
    let role = node.as_object_mut()?.remove("role")?;
    let err = NodeSpec::parse_as(role.as_str()?, node)?.err()?;
    let inner: Vec<Seg> = err
        .path()
        .iter()
        .filter_map(|s| match s {
            serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
            serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
            _ => None,
        })
        .collect();
    if inner.is_empty() {
        return None;
    }
    Some(([path.to_vec(), inner].concat(), err.inner().to_string()))
}
