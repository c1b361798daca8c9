#!/usr/bin/env bash
# Builds the site in site/: the engine as WebAssembly (crates/web), then site/engine.js,
# site/index.html and a page per lesson in scenarios/ (crates/web's splitbrain-site).
# One command, from anywhere:   site/build.sh
#
# Needs Rust's wasm32-unknown-unknown standard library. Where rustup can add the target that
# is `rustup target add wasm32-unknown-unknown`. Where it cannot (Debian 12, as CI), Debian's
# packages give it, and the build then compiles std for the target itself (-Zbuild-std):
#   apt-get install -y rustc-web cargo-web rust-web-src lld-22
# The module is the same bytes for the same toolchain and sources: paths of the machine are
# remapped, so none is embedded. SPLITBRAIN_WASM_TARGET_DIR sets the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
target_dir="${SPLITBRAIN_WASM_TARGET_DIR:-$root/target-wasm}"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  cargo_cmd=(cargo build)
  std_src="$(rustc --print sysroot)"
elif [ -x /usr/bin/cargo ] && [ -d /usr/lib/rustlib/src/rust/library ]; then
  export RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1
  # Debian's rustc has no `rust-lld`; lld-22's wasm-ld is the same linker for this target.
  export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="${CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER:-wasm-ld-22}"
  cargo_cmd=(/usr/bin/cargo build -Zbuild-std=std,panic_abort)
  std_src=/usr/lib/rustlib/src/rust
else
  echo "no wasm32-unknown-unknown standard library: rustup target add wasm32-unknown-unknown," >&2
  echo "or (Debian 12) apt-get install -y rustc-web cargo-web rust-web-src lld-22" >&2
  exit 2
fi
export RUSTFLAGS="--remap-path-prefix=$root=. --remap-path-prefix=$cargo_home=/cargo --remap-path-prefix=$std_src=/rust"
CARGO_TARGET_DIR="$target_dir" "${cargo_cmd[@]}" -p splitbrain-web --lib \
  --target wasm32-unknown-unknown --profile web
unset RUSTFLAGS RUSTC RUSTC_BOOTSTRAP CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER
wasm="$target_dir/wasm32-unknown-unknown/web/splitbrain_web.wasm"
cargo run -q --profile "${SPLITBRAIN_SITE_PROFILE:-quick}" -p splitbrain-web --bin splitbrain-site -- "$wasm" scenarios site
site/fingerprint.sh > site/FINGERPRINT
