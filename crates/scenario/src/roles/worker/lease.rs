//! `lock: "lease"` workers: the lease service as the lock. Defaults as the protocol's
//! `LeaseClientConfig::new`: `ttl` 10 s, no renewal, `safety_margin` 0, `request_timeout`
//! 500 ms, `on_renew_failure` "stop_at_deadline" (`stop_on_renew_failure` is its older alias:
//! true = "stop_at_deadline", false = "keep_believing"), no limit on `renew_attempts`.

use super::spec::WorkerSpec;
use crate::checker::NodeCheck;
use crate::duration::or;
use crate::roster::Roster;
use splitbrain_protocols::lease::LeaseClientConfig;
use splitbrain_protocols::lock::LockConfig;

/// The fields only this lock reads, and whether `w` sets each.
pub(super) fn own_fields(w: &WorkerSpec) -> Vec<(&'static str, bool)> {
    vec![
        ("service", w.service.is_some()),
        ("renew_every", w.renew_every.is_some()),
        ("safety_margin", w.safety_margin.is_some()),
        ("stop_on_renew_failure", w.stop_on_renew_failure.is_some()),
        ("on_renew_failure", w.on_renew_failure.is_some()),
        ("grace", w.grace.is_some()),
        ("renew_attempts", w.renew_attempts.is_some()),
    ]
}

/// Checks what a lease worker needs: `service`, a lease service node.
pub(super) fn validate(w: &WorkerSpec, v: &mut NodeCheck<'_, '_>) {
    match &w.service {
        Some(s) => v.node_ref("service", s, &["lease_service"]),
        None => v.err_node("a lease worker needs `service`, the lease service node"),
    }
    w.belief().validate(v);
}

/// The lease client config of a worker spec (validated: `service` is set).
pub(super) fn config(w: &WorkerSpec, roster: &Roster, name: String) -> LockConfig {
    let service = roster.id(w
        .service
        .as_deref()
        .expect("validated: lease workers name a service"));
    let mut c = LeaseClientConfig::new(service, name);
    c.ttl = or(w.ttl, c.ttl);
    c.renew_every = w.renew_every.map(|r| r.0);
    c.safety_margin = or(w.safety_margin, c.safety_margin);
    c.on_renew_failure = w.belief().policy();
    c.renew_attempts = w.renew_attempts;
    c.request_timeout = or(w.request_timeout, c.request_timeout);
    LockConfig::Lease(c)
}
