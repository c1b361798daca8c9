//! Editing a scenario's JSON at a dotted path (`sweep --vary`): `nodes.client-1.clock.drift_ppm`,
//! `faults.0.for`. The edit is made on the file's JSON with its key order kept (node ids follow
//! the order of `nodes`), then the result is validated like any file.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use splitbrain_scenario::error::shell_word;
use splitbrain_scenario::error::{did_you_mean, ScenarioError};
use splitbrain_scenario::json::without_bom;
use splitbrain_scenario::json::{path_segments, Json, TWICE};
use splitbrain_scenario::load_str;
use splitbrain_scenario::plan::Plan;

/// Splits a `--vary` list at its top-level commas: a comma inside brackets, braces or a
/// quoted string belongs to its value (`[1,2],[3]` is two values, `"a,b"` one). Brackets,
/// braces and quotes must balance (outside strings): a stray `}` or an unclosed `{` is
/// refused with its place (character N of the list, from 1), not read as text.
pub fn split_values(text: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    // The opening brackets not closed yet, with their places.
    let mut open: Vec<(char, usize)> = Vec::new();
    let (mut string_at, mut escaped, mut start) = (None, false, 0);
    for (k, (i, c)) in text.char_indices().enumerate() {
        let at = k + 1;
        if string_at.is_some() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => string_at = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => string_at = Some(at),
            '[' | '{' => open.push((c, at)),
            ']' | '}' => {
                let want = if c == ']' { '[' } else { '{' };
                match open.pop() {
                    Some((o, _)) if o == want => {}
                    Some((o, from)) => {
                        return Err(format!(
                            "`{c}` at character {at} does not close the `{o}` at character {from}"
                        ))
                    }
                    None => return Err(format!("`{c}` at character {at} closes nothing")),
                }
            }
            ',' if open.is_empty() => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if let Some(from) = string_at {
        return Err(format!("the `\"` at character {from} is never closed"));
    }
    if let Some((o, from)) = open.pop() {
        return Err(format!("the `{o}` at character {from} is never closed"));
    }
    out.push(&text[start..]);
    Ok(out)
}

/// Why a `--vary` argument cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaryError {
    /// The argument is not `path=v1,v2,...`.
    #[error("--vary expects PATH=V1,V2,... (e.g. nodes.client-1.clock.drift_ppm=0,100,1000), found `{0}`")]
    Syntax(String),
    /// The argument is not `path=value`.
    #[error("--set expects PATH=VALUE (e.g. faults.0.for=5s), found `{0}`")]
    SetSyntax(String),
    /// The argument is not `path=lo..hi`.
    #[error("--find-threshold expects PATH=LO..HI with numbers or durations (e.g. faults.0.for=1s..20s), found {0}")]
    SearchSyntax(String),
    /// The path does not lead anywhere in the scenario.
    #[error("--set/--vary path `{path}`: {reason}")]
    Path {
        /// The dotted path.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The scenario text is not JSON.
    #[error("the scenario is not valid JSON: {0}")]
    Json(String),
}

/// A parsed `--vary PATH=V1,V2,...`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vary {
    /// Dotted path into the scenario JSON.
    pub path: String,
    /// The values, as written.
    pub values: Vec<String>,
}

impl std::str::FromStr for Vary {
    type Err = VaryError;
    fn from_str(s: &str) -> Result<Self, VaryError> {
        let (path, values) = s
            .split_once('=')
            .ok_or_else(|| VaryError::Syntax(s.into()))?;
        let path = path.trim();
        let values: Vec<String> = split_values(values)
            .map_err(|reason| VaryError::Path {
                path: path.to_string(),
                reason: format!(
                    "{reason} in the values `{values}`: brackets, braces and quotes must balance"
                ),
            })?
            .into_iter()
            .map(|v| v.trim().to_string())
            .collect();
        if path.is_empty() || values.iter().any(String::is_empty) {
            return Err(VaryError::Syntax(s.into()));
        }
        // A value twice ran every seed twice and printed and drew the same point twice.
        for (i, v) in values.iter().enumerate() {
            if let Some(first) = values[..i].iter().find(|w| same_value(w, v)) {
                return Err(VaryError::Path {
                    path: path.to_string(),
                    reason: if first == v {
                        format!("--vary lists `{v}` twice: give each value once")
                    } else {
                        format!(
                            "--vary lists `{first}` and `{v}`, the same value: give each value once"
                        )
                    },
                });
            }
        }
        Ok(Vary {
            path: path.to_string(),
            values,
        })
    }
}

/// Whether two `--vary` texts stand for the same value: the same text, the same duration
/// (`5s`, `5000ms`, or `5000000000`, integer ns beside a duration) or the same number (`1`,
/// `1.0`).
fn same_value(a: &str, b: &str) -> bool {
    // A quoted text is the string it quotes, as an unquoted text that is not JSON is: `"5s"`
    // and `5s` are the same string (`"5"` and `5` are not: a number is read as one).
    let unquoted = |t: &str| -> String {
        match serde_json::from_str::<String>(t) {
            Ok(inner) if serde_json::from_str::<Json>(&inner).is_err() => inner,
            _ => t.to_string(),
        }
    };
    let (a, b) = (&*unquoted(a), &*unquoted(b));
    if a == b {
        return true;
    }
    // Two JSON values (lists, objects) are the same when they read the same.
    if let (Ok(x), Ok(y)) = (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        if x.is_array() || x.is_object() {
            return x == y;
        }
    }
    if let Some([x, y]) = splitbrain_scenario::duration::durations_ns(&[a, b]).as_deref() {
        return x == y;
    }
    matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

/// The JSON value a `--set` / `--vary` text stands for at a place whose current value is
/// `current`. Where the file has a string (names, durations) the text is a string, with two
/// exceptions: a quoted JSON string (`"..."`) is that string, and an integer where the file has
/// a duration (`"40s"`, `"+2s"`) is that number, integer nanoseconds, as the scenario format
/// reads a duration written as a JSON number (`--set duration=30000000000` was sent as the
/// string "30000000000" and refused for its missing unit). Elsewhere the text read as JSON
/// (numbers, booleans), else a string.
fn value_of(text: &str, current: Option<&Json>) -> Result<Json, String> {
    let json = match serde_json::from_str::<Json>(text) {
        Ok(j) => Some(j),
        // JSON that gives a key twice: refused as in a file, not read as a plain string.
        Err(e) if e.to_string().starts_with(TWICE) => {
            let m = e.to_string();
            return Err(m
                .rfind(" at line ")
                .map_or(m.clone(), |i| m[..i].to_string()));
        }
        Err(_) => None,
    };
    // An integer too large for 64 bits is read by serde_json as a float: it was set as
    // `1.8446744073709552e+19`, or as the text "18446744073709551616" said to lack a unit.
    if splitbrain_scenario::load::is_integer_text(text)
        && matches!(&json, Some(Json::Number(n)) if !(n.is_u64() || n.is_i64()))
    {
        return Err(format!(
            "the integer {text} does not fit in 64 bits: no field takes more than {}",
            u64::MAX
        ));
    }
    if let Some(Json::String(s)) = current {
        let is_duration = splitbrain_scenario::duration::parse_duration_ns(s).is_ok()
            || splitbrain_scenario::duration::parse_signed_ns(s).is_ok();
        return Ok(match json {
            Some(Json::String(quoted)) => Json::String(quoted),
            // A list or an object is that, not its text: `role=["worker"]` is said to be a
            // list where a name goes, not the unknown role `["worker"]`.
            Some(j @ (Json::Array(_) | Json::Object(_))) => j,
            Some(Json::Number(n)) if is_duration && (n.is_u64() || n.is_i64()) => Json::Number(n),
            _ => Json::String(text.to_string()),
        });
    }
    Ok(json.unwrap_or_else(|| Json::String(text.to_string())))
}

/// `segs` written back as a dotted path, quoting each segment that holds a `.`.
fn dotted(segs: &[String]) -> String {
    segs.iter()
        .map(|s| {
            if s.contains('.') {
                format!("\"{s}\"")
            } else {
                s.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Sets `path` (dotted; numeric segments index arrays) in `root` to the value `text` stands
/// for. Missing object keys on the way are created (a node without a `clock` gets one), so a
/// misspelt key is reported by validation with a "did you mean".
///
/// Long because each step of a dotted path (an object's key, a list's index, a key to create) has
/// its own error.
pub fn set_path(root: &mut Json, path: &str, text: &str) -> Result<(), VaryError> {
    let err = |reason: String| VaryError::Path {
        path: path.to_string(),
        reason,
    };
    let segs = path_segments(path).map_err(err)?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();

    let mut here = root;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let at = dotted(&segs[..i].iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let at = if at.is_empty() { "the top".into() } else { at };
        here = match here {
            Json::Object(map) => {
                // A node is never created by an edit: `nodes.client1.ttl` for a file whose node
                // is `client-1` would otherwise add a node with no role.
                if i == 1 && segs[0] == "nodes" && !map.contains_key(*seg) {
                    // `nodes.web.1.clock` for a node `web.1`: its name is quoted in a path.
                    let rest = segs[1..].join(".");
                    let dotted_name = map.keys().find(|k| {
                        k.contains('.')
                            && rest
                                .strip_prefix(k.as_str())
                                .is_some_and(|r| r.is_empty() || r.starts_with('.'))
                    });
                    let hint = match dotted_name {
                        Some(k) => format!(
                            "; the node `{k}` has a `.` in its name: quote it in the path, \
                             `nodes.\"{k}\"{}`",
                            &rest[k.len()..]
                        ),
                        None => did_you_mean(seg, map.keys().map(String::as_str))
                            .map(|s| format!("; did you mean `{s}`?"))
                            .unwrap_or_default(),
                    };
                    return Err(err(format!(
                        "the file has no node `{seg}` in `nodes`{hint}"
                    )));
                }
                if last {
                    let v = value_of(text, map.get(*seg)).map_err(err)?;
                    map.insert(seg.to_string(), v);
                    return Ok(());
                }
                // A list is never created by an edit either: an index into a missing key would
                // make an object with a key "0", which validation reports at the file's end.
                let next = segs[i + 1];
                if !map.contains_key(*seg) && next.parse::<usize>().is_ok() {
                    let here =
                        dotted(&segs[..=i].iter().map(|s| s.to_string()).collect::<Vec<_>>());
                    return Err(err(format!(
                        "the file has no `{here}`, so it has no entry {next} to set: add the list to the file first"
                    )));
                }
                map.entry(seg.to_string())
                    .or_insert_with(|| Json::Object(IndexMap::new()))
            }
            Json::Array(items) => {
                // `faults.00` is not index 0: an index has no leading zero.
                if seg.len() > 1 && seg.starts_with('0') && seg.bytes().all(|b| b.is_ascii_digit())
                {
                    return Err(err(format!(
                        "`{seg}` has a leading zero: write the index of `{at}` as {}",
                        seg.trim_start_matches('0').parse::<u64>().unwrap_or(0)
                    )));
                }
                let idx: usize = seg.parse().map_err(|_| {
                    err(format!(
                        "`{at}` is a list: expected an index, found `{seg}`"
                    ))
                })?;
                let len = items.len();
                let item = items.get_mut(idx).ok_or_else(|| {
                    err(format!(
                        "`{at}` has {len} {}, index {idx} is out of range",
                        if len == 1 { "entry" } else { "entries" }
                    ))
                })?;
                if last {
                    *item = value_of(text, Some(item)).map_err(err)?;
                    return Ok(());
                }
                item
            }
            _ => return Err(err(format!("`{at}` is not an object or a list"))),
        };
    }
    unreachable!("the loop returns at the last segment")
}

/// The scenario text `src` with `path` set to `text`, pretty-printed.
pub fn vary_text(src: &str, path: &str, text: &str) -> Result<String, VaryError> {
    let mut root: Json =
        serde_json::from_str(without_bom(src)).map_err(|e| VaryError::Json(e.to_string()))?;
    set_path(&mut root, path, text)?;
    Ok(serde_json::to_string_pretty(&root).expect("JSON serialises"))
}

/// A parsed `--set PATH=VALUE` (`run --set`, and the reproduce line of a varied sweep): one
/// value at a dotted path, applied with [`set_path`]'s typing. Everything after the first `=`
/// is the value, commas included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// Dotted path into the scenario JSON.
    pub path: String,
    /// The value, as written.
    pub value: String,
}

impl std::str::FromStr for Setting {
    type Err = VaryError;
    fn from_str(s: &str) -> Result<Self, VaryError> {
        let syntax = || VaryError::SetSyntax(s.to_string());
        let (path, value) = s.split_once('=').ok_or_else(syntax)?;
        let (path, value) = (path.trim(), value.trim());
        if path.is_empty() || value.is_empty() {
            return Err(syntax());
        }
        Ok(Setting {
            path: path.to_string(),
            value: value.to_string(),
        })
    }
}

impl std::fmt::Display for Setting {
    /// `PATH=VALUE`, quoted for a POSIX shell when it needs to be ([`shell_word`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}",
            shell_word(&format!("{}={}", self.path, self.value))
        )
    }
}

/// The scenario text `src` with every setting applied in order. Each new value is put in
/// place of the old one in the text, so every other line keeps its line and column and an
/// error elsewhere in the file points where the user's file has it (pretty-printing a one-line
/// file would make errors name lines it does not have). A setting that adds a key puts
/// it first in the deepest object the file has on its path. Should the text not read back as
/// the edited tree, the tree is pretty-printed instead.
pub fn apply_settings(src: &str, settings: &[Setting]) -> Result<String, VaryError> {
    let mut text = without_bom(src).to_string();
    let mut root: Json = serde_json::from_str(&text).map_err(|e| VaryError::Json(e.to_string()))?;
    let mut in_place = true;
    for s in settings {
        set_path(&mut root, &s.path, &s.value)?;
        if in_place {
            in_place = splice(&mut text, &root, &s.path).is_some();
        }
    }
    // The spliced text must read as the edited tree (a key given twice could send a splice
    // to the wrong occurrence): else the tree, pretty-printed.
    if in_place && serde_json::from_str::<Json>(&text).ok().as_ref() == Some(&root) {
        return Ok(text);
    }
    Ok(serde_json::to_string_pretty(&root).expect("JSON serialises"))
}

/// Writes the value at dotted `path` of `root` over the value at the same path in `text`, or,
/// where `text` lacks the path from some key on, puts that key with its new value (the whole
/// subtree the edit made) first in the deepest object `text` has; `None` if that fails.
fn splice(text: &mut String, root: &Json, path: &str) -> Option<()> {
    use splitbrain_scenario::locate::{value_span, Seg};
    let mut node = root;
    let mut segs: Vec<Seg> = Vec::new();
    for seg in path_segments(path).ok()? {
        let seg = seg.as_str();
        let (next, step) = match node {
            Json::Array(items) => {
                let i: usize = seg.parse().ok()?;
                (items.get(i)?, Seg::Index(i))
            }
            Json::Object(map) => (map.get(seg)?, Seg::Key(seg.to_string())),
            _ => return None,
        };
        if value_span(
            text,
            &[segs.as_slice(), std::slice::from_ref(&step)].concat(),
        )
        .is_none()
        {
            // `text` has `segs` (an object) but not `seg` in it: insert `"seg": next`.
            let Seg::Key(key) = step else { return None };
            let (from, to) = value_span(text, &segs)?;
            let inner = text[from..to].trim();
            if !inner.starts_with('{') {
                return None;
            }
            let empty = inner[1..inner.len() - 1].trim().is_empty();
            let member = format!(
                "{}:{}{}",
                serde_json::to_string(&key).ok()?,
                serde_json::to_string(next).ok()?,
                if empty { "" } else { "," }
            );
            text.insert_str(from + 1, &member);
            return Some(());
        }
        node = next;
        segs.push(step);
    }
    let (from, to) = value_span(text, &segs)?;
    text.replace_range(from..to, &serde_json::to_string(node).ok()?);
    Some(())
}

/// The validated plan of `file` (text `src`) with `settings` applied; errors name the settings
/// (`file [path=value]`) and the located problem in the edited text.
///
/// Long because an edited file's errors are said in terms of the settings that made it, each kind
/// in a few lines.
pub fn plan_with(file: &str, src: &str, settings: &[Setting]) -> Result<Plan, VaryPlanError> {
    plan_with_roles(
        &splitbrain_scenario::RoleRegistry::builtin(),
        file,
        src,
        settings,
    )
}

/// [`plan_with`] of a scenario whose nodes play any role of `roles`.
pub fn plan_with_roles(
    roles: &splitbrain_scenario::RoleRegistry,
    file: &str,
    src: &str,
    settings: &[Setting],
) -> Result<Plan, VaryPlanError> {
    if settings.is_empty() {
        return Ok(roles.load_str(file, src)?);
    }
    // The same path twice (`--vary a=1,2 --vary a=3`) would label runs with a value the
    // later setting replaced.
    for (i, s) in settings.iter().enumerate() {
        if settings[..i].iter().any(|e| e.path == s.path) {
            return Err(VaryError::Path {
                path: s.path.clone(),
                reason: "given twice: set or vary each path once".into(),
            }
            .into());
        }
        // One path inside another (`faults.0` and `faults.0.at`): whichever is applied later
        // replaces the other's value, and the runs would be labelled with both.
        let inside = |outer: &str, inner: &str| {
            inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with('.'))
        };
        if let Some(e) = settings[..i]
            .iter()
            .find(|e| inside(&e.path, &s.path) || inside(&s.path, &e.path))
        {
            let (outer, inner) = if inside(&e.path, &s.path) {
                (&e.path, &s.path)
            } else {
                (&s.path, &e.path)
            };
            return Err(VaryError::Path {
                path: s.path.clone(),
                reason: format!(
                    "`{inner}` is inside `{outer}`, which is set too: one would replace the \
                     other's value; set or vary `{inner}` alone, or its value inside `{outer}`'s"
                ),
            }
            .into());
        }
    }
    // A file that is not JSON gets its own located error (file:line:column), as without
    // settings; "the scenario is not valid JSON" named neither the file nor a place in it.
    // So does a file past the fault or node limit, before it is held as a JSON tree.
    if !splitbrain_scenario::schema::bounded::readable(without_bom(src)) {
        roles.load_str(file, src)?;
    }
    // A key given twice is refused as without settings: an edit would otherwise decide
    // which copy survives (the tree keeps the last, the text's first copy is replaced).
    if let Err(ScenarioError::Invalid { file: f, problems }) =
        splitbrain_scenario::load::parse(file, src)
    {
        if problems
            .iter()
            .any(|p| p.message.contains(" twice in this object"))
        {
            return Err(ScenarioError::Invalid { file: f, problems }.into());
        }
    }
    let mut text = match apply_settings(src, settings) {
        // The file itself does not read as JSON (a key given twice beside another problem the
        // checks above met first): its own located error, not "not valid JSON".
        Err(e @ VaryError::Json(_)) => {
            roles.load_str(file, src)?;
            return Err(e.into());
        }
        other => other?,
    };
    if !settings
        .iter()
        .any(|s| s.path == "chart" || s.path.starts_with("chart."))
    {
        clamp_chart_window(&mut text);
    }
    let label: Vec<String> = settings
        .iter()
        .map(|s| format!("{}={}", s.path, s.value))
        .collect();
    roles
        .load_str(&format!("{file} [{}]", label.join(" ")), &text)
        .map_err(|e| hint_for_settings(e, settings).into())
}

/// Fits the file's chart window (`chart`: the lesson's part of the run, for charts) into a
/// run a setting made shorter (`--set duration=3s` on a file whose window ends at 9 s): its
/// end becomes the run's end, and a window that starts at or after the end becomes the whole
/// run. The file's own window past its own duration is still refused; so is a window the
/// settings give themselves.
fn clamp_chart_window(text: &mut String) {
    use splitbrain_scenario::duration::{format_ns, parse_duration_ns};
    let Ok(mut root) = serde_json::from_str::<Json>(text) else {
        return;
    };
    let ns = |v: Option<&Json>| match v {
        Some(Json::String(s)) => parse_duration_ns(s).ok(),
        Some(Json::Number(n)) => n.as_u64(),
        _ => None,
    };
    let Json::Object(top) = &root else { return };
    let Some(Json::Object(chart)) = top.get("chart") else {
        return;
    };
    let (Some(end), Some(from), Some(to)) = (
        ns(top.get("duration")),
        ns(chart.get("from")),
        ns(chart.get("to")),
    ) else {
        return;
    };
    if to <= end || end == 0 {
        return;
    }
    let mut edits = vec![("chart.to", format_ns(end))];
    if from >= end {
        edits.push(("chart.from", "0ns".to_string()));
    }
    for (path, value) in edits {
        if set_path(&mut root, path, &format!("\"{value}\"")).is_err()
            || splice(text, &root, path).is_none()
        {
            return;
        }
    }
}

/// `e` with each hint written for a file (a duration "as a JSON number without quotes") said
/// for the command line where the problem is in a value a setting gave.
fn hint_for_settings(e: ScenarioError, settings: &[Setting]) -> ScenarioError {
    use splitbrain_scenario::duration::{ns_hint_set, NS_HINT_FILE};
    let ScenarioError::Invalid { file, mut problems } = e else {
        return e;
    };
    for p in &mut problems {
        // `faults[0].for` is `faults.0.for` as a setting writes it.
        let dotted = p.path.replace('[', ".").replace(']', "");
        let set_here = settings.iter().any(|s| {
            dotted == s.path
                || dotted
                    .strip_prefix(s.path.as_str())
                    .is_some_and(|rest| rest.starts_with('.'))
        });
        if set_here {
            p.message = p.message.replace(NS_HINT_FILE, &ns_hint_set(&dotted));
        }
    }
    ScenarioError::Invalid { file, problems }
}

/// Every combination of the values of `varies` (a grid), the first parameter outermost: for
/// `a=1,2` and `b=x,y`, `[a=1 b=x] [a=1 b=y] [a=2 b=x] [a=2 b=y]`.
pub fn grid(varies: &[Vary]) -> Vec<Vec<Setting>> {
    let mut out: Vec<Vec<Setting>> = vec![Vec::new()];
    for v in varies {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                v.values.iter().map(move |value| {
                    let mut s = prefix.clone();
                    s.push(Setting {
                        path: v.path.clone(),
                        value: value.clone(),
                    });
                    s
                })
            })
            .collect();
    }
    out
}

/// Why a varied scenario cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VaryPlanError {
    /// The edit itself failed.
    #[error(transparent)]
    Vary(#[from] VaryError),
    /// The edited scenario does not validate.
    #[error(transparent)]
    Invalid(#[from] ScenarioError),
}

/// One validated plan per value of `vary`, applied to the scenario text `src` of `file`.
/// Errors name the value (`file [path=value]`) and the located problem in the edited text.
pub fn vary_plans(file: &str, src: &str, vary: &Vary) -> Result<Vec<Plan>, VaryPlanError> {
    vary.values
        .iter()
        .map(|v| {
            let text = vary_text(src, &vary.path, v)?;
            Ok(load_str(&format!("{file} [{}={v}]", vary.path), &text)?)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use splitbrain_scenario::json::value_at;

    const SRC: &str = r#"{"b": 1, "a": {"x": "1s"}, "l": [{"for": "2s"}, 3]}"#;

    #[test]
    fn edits_keep_key_order_and_types() {
        let out = vary_text(SRC, "a.x", "5s").unwrap();
        let compact: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(
            serde_json::to_string(&compact).unwrap(),
            r#"{"b":1,"a":{"x":"5s"},"l":[{"for":"2s"},3]}"#
        );
        let out = vary_text(SRC, "l.0.for", "15s").unwrap();
        assert!(out.contains("\"15s\""));
        let out = vary_text(SRC, "b", "100").unwrap();
        assert!(out.contains("\"b\": 100"));
        // An integer where the file has a duration is integer nanoseconds, as in a file; a
        // quoted text is a string, wherever it goes.
        let out = vary_text(SRC, "a.x", "30000000000").unwrap();
        assert!(out.contains("\"x\": 30000000000"), "{out}");
        let out = vary_text(SRC, "a.x", "1.5").unwrap();
        assert!(out.contains("\"x\": \"1.5\""), "{out}");
        let out = vary_text(r#"{"name": "n1"}"#, "name", "7").unwrap();
        assert!(out.contains("\"name\": \"7\""), "{out}");
        let out = vary_text(SRC, "b", "\"7\"").unwrap();
        assert!(out.contains("\"b\": \"7\""), "{out}");
        // A missing key is created with JSON typing.
        let out = vary_text(SRC, "a.y.z", "-3").unwrap();
        assert!(out.contains("\"z\": -3"), "{out}");
    }

    /// A value given twice is refused: `--vary faults.0.for=5s,5s` would run every seed twice
    /// and print (and draw) the same row twice.
    #[test]
    fn a_value_given_twice_is_refused() {
        let err = |s: &str| s.parse::<Vary>().unwrap_err().to_string();
        assert_eq!(
            err("faults.0.for=5s,1s,5s"),
            "--set/--vary path `faults.0.for`: --vary lists `5s` twice: give each value once"
        );
        assert_eq!(
            err("faults.0.for=5s,5000ms"),
            "--set/--vary path `faults.0.for`: --vary lists `5s` and `5000ms`, the same value: \
             give each value once"
        );
        assert!(err("x=1,1.0").contains("`1` and `1.0`, the same value"));
        assert!("x=1,10,true,false".parse::<Vary>().is_ok());
        // Beside a duration, an integer is integer ns (as --set and --vary read it).
        assert!(err("nodes.c.ttl=5s,5000000000").contains("`5s` and `5000000000`, the same value"));
        assert!("nodes.c.ttl=5s,5".parse::<Vary>().is_ok());
    }

    /// `--vary` splits at top-level commas only, so a list or object value can be varied
    /// (`[{"fixed":"5s"}]` is one value, not pieces).
    #[test]
    fn vary_splits_only_at_top_level_commas() {
        let v: Vary = r#"network.delay={"uniform":["1ms","5ms"]},{"fixed":"2ms"}"#
            .parse()
            .unwrap();
        assert_eq!(
            v.values,
            vec![r#"{"uniform":["1ms","5ms"]}"#, r#"{"fixed":"2ms"}"#]
        );
        let v: Vary = r#"name="a,b",c, [1, 2]"#.parse().unwrap();
        assert_eq!(v.values, vec![r#""a,b""#, "c", "[1, 2]"]);
        // An escaped quote does not end the string.
        let v: Vary = r#"name="a\",b",c"#.parse().unwrap();
        assert_eq!(v.values, vec![r#""a\",b""#, "c"]);
        let e = r#"x=[1,2],[1, 2]"#.parse::<Vary>().unwrap_err().to_string();
        assert!(e.contains("the same value"), "{e}");
    }

    /// `--set faults.00.at=3s` is refused (an index has no leading zero), and `--set
    /// 'nodes.n.role=["worker"]'` sets a list, refused as a list where a name goes (not as an
    /// unknown role, the text `["worker"]`).
    #[test]
    fn set_refuses_leading_zeros_and_takes_lists_as_lists() {
        let src = r#"{"nodes": {"n": {"role": "bully"}}, "faults": [{"at": "2s"}]}"#;
        let e = vary_text(src, "faults.00.at", "3s")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`00` has a leading zero: write the index of `faults` as 0"),
            "{e}"
        );
        assert!(vary_text(src, "faults.0.at", "3s").is_ok());
        let out = vary_text(src, "nodes.n.role", r#"["worker"]"#).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["nodes"]["n"]["role"], serde_json::json!(["worker"]));
        let out = vary_text(src, "nodes.n.role", "worker").unwrap();
        assert!(out.contains(r#""role": "worker""#), "{out}");
    }

    /// Unbalanced brackets, braces and quotes are refused with their place: a stray `}` or `]`
    /// would leave the comma split at a wrong depth, and an unclosed `{` would read as text
    /// (validation then saying "found the string ...").
    #[test]
    fn unbalanced_brackets_in_vary_values_are_refused() {
        let err = |s: &str| s.parse::<Vary>().unwrap_err().to_string();
        assert_eq!(
            err("faults.0.at=1s},2s"),
            "--set/--vary path `faults.0.at`: `}` at character 3 closes nothing in the values \
             `1s},2s`: brackets, braces and quotes must balance"
        );
        assert!(err(r#"network.delay={"fixed":"1ms",2ms"#)
            .contains("the `{` at character 1 is never closed"));
        assert!(
            err("x=[1,2},3").contains("`}` at character 5 does not close the `[` at character 1")
        );
        assert!(err(r#"name="a,b"#).contains("the `\"` at character 1 is never closed"));
        // Brackets inside a quoted string are the string's.
        let v: Vary = r#"description="a}b",c"#.parse().unwrap();
        assert_eq!(v.values, vec![r#""a}b""#, "c"]);
    }

    /// `--vary '"5s",5s'` lists one value twice. `--set seed=18446744073709551616` is said not
    /// to fit in 64 bits, not set as the float `1.8446744073709552e+19`, and a duration field
    /// does not say the text has no unit.
    #[test]
    fn an_integer_past_64_bits_is_said_as_such() {
        for current in [
            None,
            Some(Json::String("5s".into())),
            Some(Json::Number(1u64.into())),
        ] {
            let e = value_of("18446744073709551616", current.as_ref()).unwrap_err();
            assert!(e.contains("does not fit in 64 bits"), "{e}");
        }
        assert_eq!(
            value_of("18446744073709551615", None).unwrap(),
            Json::Number(u64::MAX.into())
        );
        assert_eq!(value_of("-5", None).unwrap(), Json::Number((-5i64).into()));
    }

    #[test]
    fn a_quoted_value_and_the_same_text_unquoted_are_one_value() {
        let e = r#"faults.0.for="5s",5s"#.parse::<Vary>().unwrap_err().to_string();
        assert!(e.contains("`\"5s\"` and `5s`, the same value"), "{e}");
        let e = r#"faults.0.for="5s",5000ms"#.parse::<Vary>().unwrap_err().to_string();
        assert!(e.contains("the same value"), "{e}");
        // A quoted number is a string, the bare one a number: two values.
        assert!(r#"x="5",5"#.parse::<Vary>().is_ok());
    }

    /// A key given twice in a `--set` value is refused, as a file with one is (not the last
    /// copy kept without a word).
    #[test]
    fn a_key_given_twice_in_a_set_value_is_refused() {
        let e = vary_text(SRC, "a", r#"{"x":"5s","x":"6s"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set/--vary path `a`: the key `x` is given twice in one object: give each key once"
        );
        let e = vary_text(SRC, "l.0", r#"[{"for":"1s","for":"1s"}]"#).unwrap_err();
        assert!(e.to_string().contains("`for` is given twice"), "{e}");
        assert!(vary_text(SRC, "a", r#"{"x":"5s","y":{"x":1}}"#).is_ok());
    }

    /// A duration without a unit given on the command line is told how to write it there, not
    /// "as a JSON number without quotes", which a shell word cannot show.
    #[test]
    fn the_duration_hint_is_worded_for_where_the_value_came_from() {
        let src = "{\"splitbrain\": 1, \"name\": \"x\", \"duration\": \"10s\",\n \"nodes\": \
                   {\"s\": {\"role\": \"storage\"}}}";
        let set: Setting = "duration=10.5".parse().unwrap();
        let e = plan_with("f.json", src, &[set]).unwrap_err().to_string();
        assert!(e.contains("duration: duration \"10.5\" has no unit"), "{e}");
        assert!(
            e.contains(
                "a whole number of nanoseconds, without quotes (`duration=5000000000` is 5 s)"
            ),
            "{e}"
        );
        let file = src.replace("\"10s\"", "\"10\"");
        let e = load_str("f.json", &file).unwrap_err().to_string();
        assert!(
            e.contains("integer nanoseconds as a JSON number without quotes"),
            "{e}"
        );
        // A setting elsewhere leaves the file's own hint as it is.
        let seed: Setting = "seed=3".parse().unwrap();
        let e = plan_with("f.json", &file, &[seed]).unwrap_err().to_string();
        assert!(e.contains("as a JSON number without quotes"), "{e}");
    }

    #[test]
    fn bad_paths_and_syntax_are_reported() {
        assert!(matches!(
            vary_text(SRC, "l.7", "1"),
            Err(VaryError::Path { .. })
        ));
        assert!(matches!(
            vary_text(SRC, "l.x", "1"),
            Err(VaryError::Path { .. })
        ));
        assert!(matches!(
            vary_text(SRC, "b.c", "1"),
            Err(VaryError::Path { .. })
        ));
        // An index into a list the file lacks creates no object with a key "0" (which would be
        // reported as "invalid type: map, expected a sequence" past the file's end).
        let e = vary_text(SRC, "faults.0.at", "1s").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set/--vary path `faults.0.at`: the file has no `faults`, so it has no entry 0 to \
             set: add the list to the file first"
        );
        let e = vary_text(SRC, "a.l.2", "1s").unwrap_err();
        assert!(e.to_string().contains("the file has no `a.l`"), "{e}");
        // One entry is an entry.
        let e = vary_text(r#"{"l": [1]}"#, "l.3", "1").unwrap_err();
        assert!(e.to_string().contains("`l` has 1 entry, index 3"), "{e}");
        // A misspelt node name adds no node with no role (which would be "missing field
        // `role`" at a line of the edited text the user never saw).
        let nodes = r#"{"nodes": {"client-1": {"role": "worker"}}}"#;
        let e = vary_text(nodes, "nodes.client1.ttl", "5s").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set/--vary path `nodes.client1.ttl`: the file has no node `client1` in `nodes`; \
             did you mean `client-1`?"
        );
        assert!(vary_text(nodes, "nodes.client-1.clock.drift_ppm", "5").is_ok());
        assert!("nope".parse::<Vary>().is_err());
        assert!("a=1,,2".parse::<Vary>().is_err());
        let v: Vary = "faults.0.for=1s, 5s,15s".parse().unwrap();
        assert_eq!(v.values, vec!["1s", "5s", "15s"]);
    }

    /// `--vary faults.0.at=1s,2s --vary 'faults.0={...}'` (one setting inside another) is
    /// refused: every combination would run with the second value's `at`, labelled 1s and 2s.
    #[test]
    fn a_path_inside_another_set_path_is_refused() {
        let src = r#"{"splitbrain": 1, "faults": [{"at": "1s", "crash": "a"}]}"#;
        let settings =
            |a: &str, b: &str| -> Vec<Setting> { vec![a.parse().unwrap(), b.parse().unwrap()] };
        let refusal = "`faults.0.at` is inside `faults.0`, which is set too: one would replace \
                       the other's value; set or vary `faults.0.at` alone, or its value inside \
                       `faults.0`'s";
        for (a, b, at) in [
            (
                "faults.0.at=2s",
                r#"faults.0={"at": "3s", "crash": "a"}"#,
                "faults.0",
            ),
            (
                r#"faults.0={"at": "3s", "crash": "a"}"#,
                "faults.0.at=2s",
                "faults.0.at",
            ),
        ] {
            let e = plan_with("f.json", src, &settings(a, b)).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("--set/--vary path `{at}`: {refusal}")
            );
        }
        // A path that only starts with the same letters is another path.
        let e = plan_with("f.json", src, &settings("faults.0.at=2s", "faults.0.atx=1"))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("is inside"), "{e}");
    }

    /// Regression: a node whose name has a `.` (valid in a file) could not be addressed by
    /// `--set`, `--vary` or `--find-threshold`: `nodes.db.1.clock` looked for a node `db`.
    /// A quoted segment is one segment.
    #[test]
    fn a_quoted_segment_addresses_a_name_with_a_dot() {
        assert_eq!(
            path_segments(r#"nodes."db.1".clock.drift_ppm"#).unwrap(),
            ["nodes", "db.1", "clock", "drift_ppm"]
        );
        assert_eq!(path_segments("faults.0.at").unwrap(), ["faults", "0", "at"]);
        assert_eq!(path_segments(r#""a.b""#).unwrap(), ["a.b"]);
        for (bad, says) in [
            (r#"nodes."db.1.clock"#, "never closed"),
            (
                r#"nodes."db.1"x.clock"#,
                "a quoted segment is a whole segment",
            ),
            (r#"nodes.d"b.clock"#, "has a `\"` inside it"),
            ("a..b", "empty segment"),
            (r#"a."".b"#, "empty segment"),
        ] {
            let e = path_segments(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let src = r#"{"nodes": {"db.1": {"role": "bully"}, "db.2": {"role": "bully"}}}"#;
        let out = vary_text(src, r#"nodes."db.1".clock.drift_ppm"#, "100").unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["nodes"]["db.1"]["clock"]["drift_ppm"], 100);
        assert_eq!(
            value_at(&out, r#"nodes."db.1".clock.drift_ppm"#),
            Some(Json::Number(100.into()))
        );
        // In place: the rest of the text keeps its lines.
        let set: Setting = r#"nodes."db.2".clock.drift_ppm=7"#.parse().unwrap();
        let text = apply_settings(src, &[set]).unwrap();
        assert!(
            text.contains(r#""db.2": {"clock":{"drift_ppm":7},"role": "bully"}"#),
            "{text}"
        );
        let e = vary_text(src, "nodes.db.1.clock.drift_ppm", "100").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set/--vary path `nodes.db.1.clock.drift_ppm`: the file has no node `db` in \
             `nodes`; the node `db.1` has a `.` in its name: quote it in the path, \
             `nodes.\"db.1\".clock.drift_ppm`"
        );
    }

    #[test]
    fn a_path_set_twice_is_refused() {
        // `--vary faults.1.at=1s,2s --vary faults.1.at=3s` is refused: every combination would
        // run at 3s and be reported as 1s and 2s.
        let src = r#"{"splitbrain": 1}"#;
        let twice: Vec<Setting> = vec!["seed=1".parse().unwrap(), "seed=2".parse().unwrap()];
        // `run broken.json --set seed=1` names the file in its error, not only "the scenario is
        // not valid JSON: expected value at line 3 column 11".
        let broken = "{\n  \"splitbrain\": 1,\n  \"name\": x\n}\n";
        let one: Setting = "seed=1".parse().unwrap();
        assert_eq!(
            plan_with("f.json", broken, &[one]).unwrap_err().to_string(),
            "f.json:3:11: name: expected a value: a string `\"...\"`, a number, an object \
             `{...}`, a list `[...]`, true, false or null"
        );
        let e = plan_with("f.json", src, &twice).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--set/--vary path `seed`: given twice: set or vary each path once"
        );
    }

    #[test]
    fn a_grid_is_every_combination_first_parameter_outermost() {
        let a: Vary = "a=1,2".parse().unwrap();
        let b: Vary = "b=x,y,z".parse().unwrap();
        let g = grid(&[a, b]);
        let words: Vec<String> = g
            .iter()
            .map(|c| {
                c.iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            words,
            ["a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"]
        );
        assert_eq!(grid(&[]), vec![Vec::<Setting>::new()]);
    }

    #[test]
    fn settings_apply_in_order_and_print_as_shell_words() {
        let a: Setting = "a.x=5s".parse().unwrap();
        let b: Setting = "b=7".parse().unwrap();
        let out = apply_settings(SRC, &[a.clone(), b]).unwrap();
        let compact: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(
            serde_json::to_string(&compact).unwrap(),
            r#"{"b":7,"a":{"x":"5s"},"l":[{"for":"2s"},3]}"#
        );
        assert_eq!(a.to_string(), "a.x=5s");
        let spaced: Setting = "name=a b".parse().unwrap();
        assert_eq!(spaced.to_string(), "'name=a b'");
        assert!("nope".parse::<Setting>().is_err());
        assert!("a=".parse::<Setting>().is_err());
    }
}
