#!/usr/bin/env bash
# Prints the fingerprint of everything site/ is built from: the sources of the crates compiled
# to WebAssembly and of the page generator, the lock file, the lessons and this folder's build
# script. site/build.sh writes it to site/FINGERPRINT; CI recomputes it and fails when the
# committed site was built from other sources. The module's bytes are not compared: the
# browser test proves what matters, that every page gives the binary's trace hash.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z -- Cargo.toml Cargo.lock scenarios site/build.sh \
  'crates/engine/src' 'crates/protocols/src' 'crates/check/src' 'crates/scenario/src' \
  'crates/lab/src' 'crates/report/src' 'crates/report/assets' 'crates/web' 'crates/lab/Cargo.toml' \
  'crates/engine/Cargo.toml' 'crates/protocols/Cargo.toml' 'crates/check/Cargo.toml' \
  'crates/scenario/Cargo.toml' 'crates/report/Cargo.toml' \
  | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
