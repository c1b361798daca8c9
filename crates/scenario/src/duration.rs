//! Human-friendly durations in scenario files: `"250ms"`, `"10s"`, `"1.5s"`, `"2m"`, or an
//! integer number of nanoseconds. Parsed exactly into integer nanoseconds (no float).

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, SingleOrVec, SubschemaValidation};
use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use splitbrain_engine::{parse_rfc3339_ns, SimDuration, WallTime, DEFAULT_WALL_START_NS};
use std::fmt;

/// A non-negative duration, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Dur(pub SimDuration);

/// An optional duration of a spec, or `default` when the file leaves it out.
pub fn or(d: Option<Dur>, default: SimDuration) -> SimDuration {
    d.map_or(default, |d| d.0)
}

/// A signed duration (clock steps, offsets), ns: `"+20s"`, `"-500ms"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct SignedDur(pub i64);

const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The durations, ns, that `texts` stand for as the values of one duration field, as
/// `--set`/`--vary` read them: `"<number><unit>"`, or a bare integer, which is integer
/// nanoseconds (as a duration written as a JSON number in a scenario file). `None` unless at
/// least one text has a unit (plain numbers are not durations) and every text is one of the
/// two forms.
pub fn durations_ns(texts: &[&str]) -> Option<Vec<u64>> {
    if !texts.iter().any(|t| parse_duration_ns(t).is_ok()) {
        return None;
    }
    texts
        .iter()
        .map(|t| {
            parse_duration_ns(t)
                .ok()
                .or_else(|| t.trim().parse::<u64>().ok())
        })
        .collect()
}

/// The end of the "no unit" hint for a duration written in a file. On a command line, where
/// the user writes no JSON quotes, `vary::plan_with` says [`ns_hint_set`] instead.
pub const NS_HINT_FILE: &str = "or integer nanoseconds as a JSON number without quotes";

/// The end of the "no unit" hint for a duration given on the command line at `path` (with
/// `--set` or `--vary`), where no JSON quotes show.
pub fn ns_hint_set(path: &str) -> String {
    format!("or a whole number of nanoseconds, without quotes (`{path}=5000000000` is 5 s)")
}

/// Parses `"<number><unit>"` (units ns, us, µs, ms, s, m/min, h; the number may have a
/// decimal fraction) into nanoseconds, exactly. Errors say what was expected; a negative one
/// (`"-1s"`) is named as such, in a file and on the command line alike. A space before or
/// after it (`" 2s"`) is refused, as every other malformed duration is.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    no_spaces(text)?;
    let s = text;
    if s.starts_with('-') {
        return Err(format!("a duration cannot be negative: \"{text}\""));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = (&s[..split], s[split..].trim());
    if num.is_empty() {
        return Err(format!(
            "expected a duration like \"250ms\" or \"1.5s\", found \"{text}\""
        ));
    }
    if unit.is_empty() {
        return Err(format!(
            "duration \"{text}\" has no unit: write \"{num}ms\", \"{num}s\", ... (units ns, us, \
             ms, s, m, h), {NS_HINT_FILE}"
        ));
    }
    let Some(&(_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(format!(
            "unknown duration unit \"{unit}\" in \"{text}\": expected one of ns, us, ms, s, m, h"
        ));
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return Err(format!("malformed number in duration \"{text}\""));
    }
    let overflow = || {
        format!("duration \"{text}\" is too long: past 2^64 ns (about 584 years), and a run lasts at most 24 h")
    };
    let int_ns = if int.is_empty() {
        0
    } else {
        int.parse::<u64>().map_err(|_| overflow())?
    };
    let mut ns = int_ns.checked_mul(scale).ok_or_else(overflow)?;
    let mut place = scale;
    for c in frac.chars() {
        place /= 10;
        let d = c.to_digit(10).expect("digits only") as u64;
        if place == 0 {
            if d != 0 {
                return Err(format!("duration \"{text}\" is finer than a nanosecond"));
            }
            continue;
        }
        ns = ns.checked_add(d * place).ok_or_else(overflow)?;
    }
    Ok(ns)
}

/// Refuses a duration with a space (or other white space) before or after it, saying what to
/// write.
fn no_spaces(text: &str) -> Result<(), String> {
    if text.trim() != text {
        return Err(format!(
            "a duration has no spaces around it: write \"{}\", found \"{text}\"",
            text.trim()
        ));
    }
    Ok(())
}

/// Parses a signed duration: an optional `+` or `-` then [`parse_duration_ns`].
pub fn parse_signed_ns(text: &str) -> Result<i64, String> {
    no_spaces(text)?;
    let s = text;
    let (neg, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let ns = parse_duration_ns(rest)?;
    let ns = i64::try_from(ns).map_err(|_| {
        format!("duration \"{text}\" is too long: past 2^63 ns (about 292 years), and a run lasts at most 24 h")
    })?;
    Ok(if neg { -ns } else { ns })
}

struct DurVisitor;

impl Visitor<'_> for DurVisitor {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a duration like \"250ms\", \"10s\", \"1.5s\", or an integer number of nanoseconds",
        )
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        parse_duration_ns(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::custom(format!("a duration cannot be negative: {v}")))
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurVisitor).map(|ns| Dur(SimDuration(ns)))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_ns(self.0.as_nanos()))
    }
}

struct SignedVisitor;

impl Visitor<'_> for SignedVisitor {
    type Value = i64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a signed duration like \"+20s\" or \"-500ms\", or an integer number of nanoseconds",
        )
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
        parse_signed_ns(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::custom("duration too long"))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }
}

impl<'de> Deserialize<'de> for SignedDur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SignedVisitor).map(SignedDur)
    }
}

impl Serialize for SignedDur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sign = if self.0 < 0 { "-" } else { "+" };
        s.serialize_str(&format!("{sign}{}", format_ns(self.0.unsigned_abs())))
    }
}

/// Formats nanoseconds in the largest unit that shows them exactly ("1500ms" stays "1500ms",
/// "2000000000" becomes "2s").
pub fn format_ns(ns: u64) -> String {
    for (unit, scale) in [
        ("h", 3_600_000_000_000u64),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if ns != 0 && ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

fn duration_schema(pattern: &str, description: &str) -> Schema {
    let s = SchemaObject {
        instance_type: Some(SingleOrVec::Single(Box::new(InstanceType::String))),
        string: Some(Box::new(schemars::schema::StringValidation {
            pattern: Some(pattern.to_string()),
            ..Default::default()
        })),
        ..Default::default()
    };
    let i = SchemaObject {
        instance_type: Some(SingleOrVec::Single(Box::new(InstanceType::Integer))),
        ..Default::default()
    };
    let mut o = SchemaObject {
        subschemas: Some(Box::new(SubschemaValidation {
            one_of: Some(vec![s.into(), i.into()]),
            ..Default::default()
        })),
        ..Default::default()
    };
    o.metadata().description = Some(description.to_string());
    o.into()
}

impl JsonSchema for Dur {
    fn schema_name() -> String {
        "Duration".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        duration_schema(
            r"^\s*[0-9]*\.?[0-9]+\s*(ns|us|µs|ms|s|m|min|h)\s*$",
            "A duration: \"250ms\", \"10s\", \"1.5s\", \"2m\" (units ns, us, ms, s, m, h), or integer nanoseconds.",
        )
    }
}

impl JsonSchema for SignedDur {
    fn schema_name() -> String {
        "SignedDuration".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        duration_schema(
            r"^\s*[+-]?[0-9]*\.?[0-9]+\s*(ns|us|µs|ms|s|m|min|h)\s*$",
            "A signed duration: \"+20s\", \"-500ms\", or integer nanoseconds.",
        )
    }
}

/// A Unix time, ns, written in files as an RFC 3339 UTC timestamp (`"2026-01-01T00:00:00Z"`,
/// an optional fraction down to the ns); a scenario's `wall_clock_start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnixTime(pub i64);

impl Default for UnixTime {
    /// 2026-01-01T00:00:00Z ([`DEFAULT_WALL_START_NS`]).
    fn default() -> Self {
        UnixTime(DEFAULT_WALL_START_NS)
    }
}

impl<'de> Deserialize<'de> for UnixTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A visitor, not `String::deserialize` then `map_err`: an error raised inside
        // `visit_str` is located by serde_json at the value, one raised after it at wherever
        // the parser stands when the object ends (its closing brace, for the last field).
        struct RfcVisitor;
        impl Visitor<'_> for RfcVisitor {
            type Value = UnixTime;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a UTC time like \"2026-01-01T00:00:00Z\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<UnixTime, E> {
                // Say the accepted range, not only that a field is out of it; a year outside
                // it is said as such, not blamed on the date and the time of day.
                let year = s.trim().get(0..4).and_then(|y| y.parse::<i64>().ok());
                let out_of_range = match year {
                    Some(y) if !(1970..=2200).contains(&y) => {
                        format!("(the year {y} is outside 1970..=2200)")
                    }
                    _ => "(out of range: the date must exist and the time of day be within \
                          00:00:00..=23:59:59)"
                        .to_string(),
                };
                parse_rfc3339_ns(s).map(UnixTime).map_err(|e| {
                    E::custom(
                        e.replace(
                            "(RFC 3339, ending in Z)",
                            "(RFC 3339, ending in Z, years 1970..=2200)",
                        )
                        .replace("(fields out of range)", &out_of_range),
                    )
                })
            }
        }
        d.deserialize_str(RfcVisitor)
    }
}

impl Serialize for UnixTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&WallTime(self.0).rfc3339())
    }
}

impl JsonSchema for UnixTime {
    fn schema_name() -> String {
        "UnixTime".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut o = SchemaObject {
            instance_type: Some(SingleOrVec::Single(Box::new(InstanceType::String))),
            string: Some(Box::new(schemars::schema::StringValidation {
                pattern: Some(
                    r"^\s*[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?[Zz]\s*$"
                        .to_string(),
                ),
                ..Default::default()
            })),
            ..Default::default()
        };
        o.metadata().description = Some(
            "A UTC time in RFC 3339 form, ending in Z: \"2026-01-01T00:00:00Z\" (years 1970..=2200, fraction down to ns).".to_string(),
        );
        o.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_time_round_trips_and_locates_errors() {
        let t: UnixTime = serde_json::from_str("\"2026-01-01T00:00:00Z\"").unwrap();
        assert_eq!(t, UnixTime(1_767_225_600_000_000_000));
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2026-01-01T00:00:00.000Z\""
        );
        let e = serde_json::from_str::<UnixTime>("\"2026-01-01\"").unwrap_err();
        assert!(e.to_string().contains("RFC 3339"), "{e}");
    }

    #[test]
    fn parses_exactly() {
        assert_eq!(parse_duration_ns("250ms"), Ok(250_000_000));
        assert_eq!(parse_duration_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration_ns("0.000000001s"), Ok(1));
        assert_eq!(parse_duration_ns("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration_ns(".5ms"), Ok(500_000));
        assert_eq!(parse_signed_ns("-20s"), Ok(-20_000_000_000));
        assert_eq!(parse_signed_ns("+1ms"), Ok(1_000_000));
    }

    #[test]
    fn rejects_with_reasons() {
        assert!(parse_duration_ns("10")
            .unwrap_err()
            .contains("\"10\" has no unit: write \"10ms\""));
        assert!(parse_duration_ns("10 parsecs")
            .unwrap_err()
            .contains("parsecs"));
        assert!(parse_duration_ns("s")
            .unwrap_err()
            .contains("expected a duration"));
        assert!(parse_duration_ns("1.2.3s").is_err());
        assert!(parse_duration_ns("0.0000000001s")
            .unwrap_err()
            .contains("finer"));
        assert!(parse_duration_ns("99999999999999999999h")
            .unwrap_err()
            .contains("too long"));
    }

    #[test]
    fn formats_round_trip() {
        for ns in [
            1u64,
            1_000,
            250_000_000,
            1_500_000_000,
            60_000_000_000,
            7_200_000_000_000,
        ] {
            assert_eq!(parse_duration_ns(&format_ns(ns)), Ok(ns));
        }
    }
}
