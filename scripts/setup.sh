#!/usr/bin/env bash
# setup.sh: detect what dynops's build and tests need, install what can be
# installed (Go tools at pinned versions), and fail naming what is missing.
#
# Installed tools live in $DYNOPS_TOOLS_DIR (default ~/.cache/dynops/tools),
# one folder per tool and version, so a second run costs nothing.
# Prints shell `export` lines on stdout when called with --print-env.
#
# DYNOPS_SETUP_TOOLS picks what a run sets up: "all" (default); "test",
# everything but the Go tools only `make lint` runs (tflint and its aws
# ruleset, terraform-docs, actionlint: most of a cold setup's CPU); "lint",
# only those, under a lock of their own. On a new machine `make test` builds
# the lint tools that way in the background while the tests run
# (scripts/test-stages.sh); `setup.sh --missing-lint-tools` names the ones
# not built yet.
set -euo pipefail

TFLINT_VERSION=v0.64.0
TFLINT_AWS_VERSION=v0.48.0
TERRAFORM_DOCS_VERSION=v0.24.0
GOTESTSUM_VERSION=v1.12.3
ACTIONLINT_VERSION=v1.7.12
# The Go mutation tool of `make mutate`; built only when that target asks
# (DYNOPS_SETUP_MUTATE=1), so `make test` does not pay for it.
GREMLINS_VERSION=v0.5.0
# IAM policy evaluator for the tenant-isolation tests (test/modules/access). AGPL-3.0:
# a test-only tool in the tool cache, never shipped with dynops.
IAM_SIMULATE_VERSION=0.1.173
# Typed bindings generated from hashicorp/aws 6.66.0: the static schema the
# provider-6 check (test/modules/provider6) reads, since no 6.x provider binary can be
# had here. Pinned by version and by the registry's integrity hash.
CDKTN_AWS_VERSION=25.7.0
CDKTN_AWS_INTEGRITY=sha512-E/nhu0yVZE4mXMgIPuI8tEFt1BExLkA7ARjihdG+/HmfDfzLr+OEF3dkFRvI6glRt30lrrBWQLwXqCJBxcmyUg==
TERRAFORM_MIN=1.11.0
AWS_PROVIDER_VERSION=5.100.0
MIRROR_DIR=${DYNOPS_PROVIDER_MIRROR:-/opt/tf-plugins}

TOOLS=${DYNOPS_TOOLS_DIR:-$HOME/.cache/dynops/tools}
mkdir -p "$TOOLS"

log() { printf 'setup: %s\n' "$*" >&2; }

MODE=${DYNOPS_SETUP_TOOLS:-all}
case "$MODE" in
  all | test | lint) ;;
  *) log "DYNOPS_SETUP_TOOLS=$MODE: use all (default), test (no lint-only tools) or lint (only those)"; exit 2 ;;
esac

# go_tool NAME MODULE VERSION [PKG]: build a Go tool once into $TOOLS/NAME-VERSION.
# `go install mod@version` is tried first; the module proxy refuses the version
# list of some modules, so the fallback downloads the module and builds it there.
# The tools are built without debug information (no DWARF from the compiler, no
# symbol table from the linker): nobody debugs them here, and it cuts a cold
# build of all six from 1,135 to 929 CPU-s (measured; README, Tests).
go_tool() {
  local name=$1 mod=$2 ver=$3 pkg=${4:-.}
  local lean=(-ldflags=-s\ -w -gcflags=all=-dwarf=false)
  local dir="$TOOLS/$name-$ver"
  if [ -x "$dir/$name" ]; then echo "$dir/$name"; return; fi
  log "building $name $ver (once; cached in $dir)"
  mkdir -p "$dir"
  local gobin="$dir/.gobin"
  if GOBIN="$gobin" GOFLAGS=-mod=mod go install "${lean[@]}" "$mod/${pkg#./}@$ver" >"$dir/build.log" 2>&1 && [ -n "$(ls "$gobin" 2>/dev/null)" ]; then
    mv "$gobin"/* "$dir/$name"
  else
    local src
    src=$(go mod download -json "$mod@$ver" | sed -n 's/^[[:space:]]*"Dir": *"\(.*\)",*$/\1/p')
    [ -n "$src" ] || { log "cannot download $mod@$ver from the Go module proxy (see $dir/build.log)"; exit 1; }
    rm -rf "$dir/src"; cp -r "$src" "$dir/src"; chmod -R u+w "$dir/src"
    (cd "$dir/src" && go build "${lean[@]}" -o "$dir/$name" "$pkg") >>"$dir/build.log" 2>&1 \
      || { log "building $name failed; see $dir/build.log"; exit 1; }
    rm -rf "$dir/src"
  fi
  rm -rf "$gobin"
  echo "$dir/$name"
}

# The Go tools only make lint runs: NAME MODULE VERSION [PKG], one a line.
lint_tools() {
  printf '%s\n' "tflint github.com/terraform-linters/tflint $TFLINT_VERSION" \
    "tflint-ruleset-aws github.com/terraform-linters/tflint-ruleset-aws $TFLINT_AWS_VERSION" \
    "terraform-docs github.com/terraform-docs/terraform-docs $TERRAFORM_DOCS_VERSION" \
    "actionlint github.com/rhysd/actionlint $ACTIONLINT_VERSION ./cmd/actionlint"
}

# missing_lint_tools names the lint tools not built yet, one a line.
missing_lint_tools() {
  lint_tools | while read -r name mod ver pkg; do [ -x "$TOOLS/$name-$ver/$name" ] || echo "$name"; done
}

if [ "${1:-}" = "--missing-lint-tools" ]; then
  missing_lint_tools
  exit 0
fi

# The lint tools' own lock: a setup of them (in the background of make test)
# and a setup of everything wait for each other; a setup for the tests does not.
lint_lock() {
  command -v flock >/dev/null 2>&1 || return 0
  exec 8>>"$TOOLS/.setup-lint.lock"
  if ! flock -n 8; then
    log "waiting for the lint tools' build in $TOOLS to finish"
    flock 8
  fi
}

if [ "$MODE" = lint ]; then
  lint_lock
  while read -r name mod ver pkg; do go_tool "$name" "$mod" "$ver" "${pkg:-.}" >/dev/null & done < <(lint_tools)
  wait
  failed=$(missing_lint_tools | paste -sd ' ')
  [ -z "$failed" ] || { log "lint tools not built: $failed (see their build.log under $TOOLS)"; exit 1; }
  log "ok: lint tools built in $TOOLS"
  exit 0
fi

# One setup at a time per tool cache: a second one (make demo beside make
# test, two checkouts) waits here, then finds the tools built, instead of
# building every tool again beside the first (a cold build is ~1,000 CPU-s).
if command -v flock >/dev/null 2>&1; then
  exec 9>>"$TOOLS/.setup.lock"
  if ! flock -n 9; then
    # The holder wrote who it is (pid, start, checkout) when it took the lock.
    log "waiting for another setup of $TOOLS to finish (held by $(cat "$TOOLS/.setup.holder" 2>/dev/null || echo 'a setup that did not say who it is'))"
    waited=$(date +%s)
    flock 9
    log "the other setup finished after $(( $(date +%s) - waited )) s; going on"
  fi
  printf 'pid %s, since %s, in %s\n' "$$" "$(date -u +%H:%M:%SZ)" "$PWD" >"$TOOLS/.setup.holder"
fi
missing=()

need() { # need CMD HOW-TO-GET-IT
  if ! command -v "$1" >/dev/null 2>&1; then missing+=("$1 ($2)"); return 1; fi
}

need go "Go 1.26 from https://go.dev/dl; on this machine kind it is at /usr/local/go" || true
need terraform "terraform >= $TERRAFORM_MIN; no Debian package exists, install the HashiCorp binary" || true
need moto_server "moto[server] 5.2.1: pip install 'moto[server]==5.2.1'" || true
need git "apt-get install git" || true
need node "Node.js >= 18 (apt-get install nodejs), for the IAM policy evaluator of the access tests" || true
need npm "npm (apt-get install npm), to install @cloud-copilot/iam-simulate $IAM_SIMULATE_VERSION" || true
# xmllint validates `dynops check -o junit` against the JUnit XSD. A machine
# of this kind lacks it: as root with apt-get, setup installs it (~20 s once).
if ! command -v xmllint >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  log "installing libxml2-utils (xmllint) with apt-get"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libxml2-utils; } >&2 || log "apt-get could not install libxml2-utils"
fi
need xmllint "apt-get install libxml2-utils, to validate dynops check -o junit against the JUnit XSD" || true

if command -v terraform >/dev/null 2>&1; then
  tfv=$(TF_CLI_CONFIG_FILE=/dev/null terraform version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p')
  if [ "$(printf '%s\n%s\n' "$TERRAFORM_MIN" "$tfv" | sort -V | head -1)" != "$TERRAFORM_MIN" ]; then
    missing+=("terraform >= $TERRAFORM_MIN (found $tfv)")
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  log "missing tools that setup cannot install here:"
  for m in "${missing[@]}"; do log "  - $m"; done
  exit 1
fi

# Missing tools are built all at once in the background first (a build leaves
# cores idle in its link and single-package steps); the calls below then find
# them cached, and a build that failed is retried there and reported.
# (DYNOPS_SETUP_TOOLS=test leaves the lint tools out.)
[ "$MODE" = test ] || lint_lock
(
  if [ "$MODE" = all ]; then
    while read -r name mod ver pkg; do go_tool "$name" "$mod" "$ver" "${pkg:-.}" & done < <(lint_tools)
  fi
  go_tool gotestsum gotest.tools/gotestsum "$GOTESTSUM_VERSION" &
  wait
) >/dev/null || true

tflint="" ruleset="" tfdocs="" actionlint=""
if [ "$MODE" = all ]; then
  tflint=$(go_tool tflint github.com/terraform-linters/tflint "$TFLINT_VERSION")
  ruleset=$(go_tool tflint-ruleset-aws github.com/terraform-linters/tflint-ruleset-aws "$TFLINT_AWS_VERSION")
  tfdocs=$(go_tool terraform-docs github.com/terraform-docs/terraform-docs "$TERRAFORM_DOCS_VERSION")
  actionlint=$(go_tool actionlint github.com/rhysd/actionlint "$ACTIONLINT_VERSION" ./cmd/actionlint)
fi
gotestsum=$(go_tool gotestsum gotest.tools/gotestsum "$GOTESTSUM_VERSION")
gremlins=""
if [ "${DYNOPS_SETUP_MUTATE:-}" = 1 ]; then
  gremlins=$(go_tool gremlins github.com/go-gremlins/gremlins "$GREMLINS_VERSION" ./cmd/gremlins)
fi

# The IAM evaluator: npm package into $TOOLS/iam-simulate-VERSION, reached by
# the tests through the stable link $TOOLS/iam-simulate.
iamsim="$TOOLS/iam-simulate-$IAM_SIMULATE_VERSION"
if [ ! -d "$iamsim/node_modules/@cloud-copilot/iam-simulate" ]; then
  log "installing @cloud-copilot/iam-simulate $IAM_SIMULATE_VERSION with npm (once; cached in $iamsim)"
  mkdir -p "$iamsim"
  [ -f "$iamsim/package.json" ] || echo '{"private": true}' >"$iamsim/package.json"
  (cd "$iamsim" && npm install --no-audit --no-fund --silent "@cloud-copilot/iam-simulate@$IAM_SIMULATE_VERSION") >"$iamsim/install.log" 2>&1 \
    || { log "npm install @cloud-copilot/iam-simulate@$IAM_SIMULATE_VERSION failed; see $iamsim/install.log"; exit 1; }
fi
ln -sfn "iam-simulate-$IAM_SIMULATE_VERSION" "$TOOLS/iam-simulate"

# The provider-6 schema: only lib/<resource>/index.d.ts of the npm tarball,
# after its sha512 matches the pinned integrity (npm pack alone would accept
# whatever the registry serves for that version).
cdktn="$TOOLS/cdktn-provider-aws-$CDKTN_AWS_VERSION"
if [ ! -f "$cdktn/package/lib/dynamodb-table/index.d.ts" ]; then
  log "fetching @cdktn/provider-aws $CDKTN_AWS_VERSION with npm pack (once; cached in $cdktn)"
  rm -rf "$cdktn.tmp" && mkdir -p "$cdktn.tmp"
  (cd "$cdktn.tmp" && npm pack --silent "@cdktn/provider-aws@$CDKTN_AWS_VERSION") >"$cdktn.tmp/pack.log" 2>&1 \
    || { log "npm pack @cdktn/provider-aws@$CDKTN_AWS_VERSION failed; see $cdktn.tmp/pack.log"; exit 1; }
  got="sha512-$(openssl dgst -sha512 -binary "$cdktn.tmp/cdktn-provider-aws-$CDKTN_AWS_VERSION.tgz" | base64 -w0)"
  if [ "$got" != "$CDKTN_AWS_INTEGRITY" ]; then
    log "@cdktn/provider-aws $CDKTN_AWS_VERSION: integrity $got, want $CDKTN_AWS_INTEGRITY; refusing it"
    exit 1
  fi
  tar -xzf "$cdktn.tmp/cdktn-provider-aws-$CDKTN_AWS_VERSION.tgz" -C "$cdktn.tmp" --wildcards 'package/lib/*/index.d.ts'
  rm -f "$cdktn.tmp"/*.tgz && rm -rf "$cdktn" && mv "$cdktn.tmp" "$cdktn"
fi
ln -sfn "cdktn-provider-aws-$CDKTN_AWS_VERSION" "$TOOLS/cdktn-provider-aws"

# tflint looks for plugins in TFLINT_PLUGIN_DIR/<name>; keep a folder with only the plugin.
plugin_dir="$TOOLS/tflint-plugins"
mkdir -p "$plugin_dir"
[ -z "$ruleset" ] || ln -sf "$ruleset" "$plugin_dir/tflint-ruleset-aws"

# Terraform CLI config: use the provider mirror when this machine has one, the
# registry otherwise. Written to the project's cache, never to the user's ~/.terraformrc.
rc="$TOOLS/terraform.rc"
if [ -d "$MIRROR_DIR/registry.terraform.io/hashicorp/aws/$AWS_PROVIDER_VERSION" ]; then
  cat >"$rc" <<RC
provider_installation {
  filesystem_mirror {
    path    = "$MIRROR_DIR"
    include = ["registry.terraform.io/hashicorp/*"]
  }
  direct {
    exclude = ["registry.terraform.io/hashicorp/*"]
  }
}
RC
else
  log "no provider mirror at $MIRROR_DIR: terraform will use the registry, once per provider version (plugin cache)"
  # Without a mirror every `terraform init` of every test root would download
  # the ~700 MB AWS provider; the plugin cache links it from one download.
  printf 'plugin_cache_dir = "%s"\nplugin_cache_may_break_dependency_lock_file = true\n' "$TOOLS/terraform-plugins" >"$rc"
  mkdir -p "$TOOLS/terraform-plugins"
fi

if [ "${1:-}" = "--print-env" ]; then
  if [ "$MODE" = all ]; then
    echo "export TFLINT=$tflint"
    echo "export TFLINT_PLUGIN_DIR=$plugin_dir"
    echo "export TERRAFORM_DOCS=$tfdocs"
    echo "export ACTIONLINT=$actionlint"
  fi
  echo "export GOTESTSUM=$gotestsum"
  echo "export TF_CLI_CONFIG_FILE=$rc"
  echo "export IAM_SIMULATE_DIR=$TOOLS/iam-simulate"
  echo "export PROVIDER6_SCHEMA_DIR=$TOOLS/cdktn-provider-aws/package/lib"
  [ -z "$gremlins" ] || echo "export GREMLINS=$gremlins"
fi
lint_tools_note="tflint $TFLINT_VERSION + aws $TFLINT_AWS_VERSION, terraform-docs $TERRAFORM_DOCS_VERSION, actionlint $ACTIONLINT_VERSION,"
[ "$MODE" = all ] || lint_tools_note="(no lint tools: DYNOPS_SETUP_TOOLS=$MODE),"
log "ok: go $(go env GOVERSION), terraform $(TF_CLI_CONFIG_FILE=/dev/null terraform version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p'), moto_server, $lint_tools_note gotestsum $GOTESTSUM_VERSION, node $(node --version), iam-simulate $IAM_SIMULATE_VERSION, @cdktn/provider-aws $CDKTN_AWS_VERSION (aws 6.66.0 schema)"
