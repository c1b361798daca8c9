//! JUnit XML for `check --junit FILE`: one `<testcase>` per scenario file, the form CI systems
//! (GitLab, Jenkins, GitHub test reporters) read. The schema followed is the common subset of
//! the Ant/Surefire format those tools share: `<testsuites>` holding one `<testsuite>` with
//! `tests`, `failures`, `errors` and `skipped` counts, a `<testcase>` per file with
//! `<failure>` for an outcome other than the file expects, `<error>` for a file that cannot be
//! checked (invalid, or stopped at a bound), `<skipped>` for a JSON file that is a command's
//! output, and the line `check` printed in `<system-out>`. No `time` attribute: the report is
//! a function of the files, byte for byte, like every other output.

use anyhow::Result;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

/// How one scenario file came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every invariant (and rate) as the file expects.
    Passed,
    /// Some outcome other than expected.
    Failed,
    /// Stopped at a limit before it could be judged.
    Bound,
    /// The file could not be read or validated.
    Invalid,
    /// Not a scenario (a command's output found in a folder).
    Skipped,
}

/// One `<testcase>`: the file's path as shown, its outcome, and what `check` printed for it.
pub struct Case {
    /// The file, as `check` shows it.
    pub name: String,
    /// Its outcome.
    pub outcome: Outcome,
    /// What `check` printed about it (one or more lines).
    pub text: String,
}

/// Characters XML 1.0 cannot hold at all, even escaped (C0 controls but tab, CR and LF),
/// written as U+FFFD: a file name or an error quoting a file may contain them.
fn xml_chars(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// The report for `cases`, as UTF-8 bytes.
pub fn render(cases: &[Case]) -> Result<Vec<u8>> {
    let count = |o: Outcome| cases.iter().filter(|c| c.outcome == o).count().to_string();
    let errors = (cases.iter())
        .filter(|c| matches!(c.outcome, Outcome::Bound | Outcome::Invalid))
        .count()
        .to_string();
    let tests = cases.len().to_string();
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let suite_attrs = [
        ("name", "splitbrain check"),
        ("tests", tests.as_str()),
        ("failures", &count(Outcome::Failed)),
        ("errors", errors.as_str()),
        ("skipped", &count(Outcome::Skipped)),
    ];
    w.write_event(Event::Start(
        BytesStart::new("testsuites").with_attributes(suite_attrs),
    ))?;
    w.write_event(Event::Start(
        BytesStart::new("testsuite").with_attributes(suite_attrs),
    ))?;
    for c in cases {
        let name = xml_chars(&c.name);
        let text = xml_chars(&c.text);
        let case = BytesStart::new("testcase")
            .with_attributes([("classname", "splitbrain.check"), ("name", name.as_str())]);
        w.write_event(Event::Start(case))?;
        let child = match c.outcome {
            Outcome::Passed => None,
            Outcome::Failed => Some(("failure", "not as the file expects")),
            Outcome::Bound => Some(("error", "stopped at a limit")),
            Outcome::Invalid => Some(("error", "invalid scenario file")),
            Outcome::Skipped => Some(("skipped", "not a scenario")),
        };
        if let Some((tag, message)) = child {
            let first = text.lines().next().unwrap_or_default();
            let message = format!("{message}: {first}");
            w.write_event(Event::Start(
                BytesStart::new(tag).with_attributes([("message", message.as_str())]),
            ))?;
            w.write_event(Event::Text(BytesText::new(&text)))?;
            w.write_event(Event::End(BytesEnd::new(tag)))?;
        }
        w.write_event(Event::Start(BytesStart::new("system-out")))?;
        w.write_event(Event::Text(BytesText::new(&text)))?;
        w.write_event(Event::End(BytesEnd::new("system-out")))?;
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    let mut out = w.into_inner();
    out.push(b'\n');
    Ok(out)
}
