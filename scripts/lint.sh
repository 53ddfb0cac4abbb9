#!/usr/bin/env bash
# lint.sh: every static check, each named when it fails. Run by `make lint`
# with the tools from scripts/setup.sh in the environment. Three lanes run
# side by side, each mostly on one core: the Go checks, terraform validate,
# and the rest (fmt, tflint, docs, actionlint); their output is
# printed lane by lane, each step with its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
fail=0
step_start=0
step() { step_done; printf '\n== %s\n' "$*"; step_start=$(date +%s); }
step_done() { [ "$step_start" -eq 0 ] || printf '   (%d s)\n' $(( $(date +%s) - step_start )); step_start=0; }

go_lane() {
  fail=0
  step "gofmt"
  bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
  if [ -n "$bad" ]; then echo "gofmt would change: $bad"; fail=1; fi

  step "go vet"
  go vet ./... || fail=1
  step_done
  return $fail
}
go_lane >.cache/lint-go.log 2>&1 &
go_pid=$!

validate_lane() {
  fail=0
  step "terraform validate (every module, example and env root)"
  dirs=$(find modules envs -name '*.tf' -not -path '*/.terraform/*' -exec dirname {} \; | sort -u)
  validate() {
    local d=$1 data
    # terraform cannot validate a module that takes aliased providers
    # (configuration_aliases) as a root; its examples validate it as called.
    if grep -qs configuration_aliases "$d"/*.tf; then echo "ok   $d (through its examples)"; return 0; fi
    data=$(mktemp -d)
    if ! out=$(TF_DATA_DIR="$data" terraform -chdir="$d" init -backend=false -input=false -no-color 2>&1 \
        && TF_DATA_DIR="$data" terraform -chdir="$d" validate -no-color 2>&1); then
      printf 'FAIL %s\n%s\n' "$d" "$out"; rm -rf "$data"; return 1
    fi
    # keep committed lock files (the env roots'); drop the ones init just wrote
    git ls-files --error-unmatch "$d/.terraform.lock.hcl" >/dev/null 2>&1 || rm -f "$d/.terraform.lock.hcl"
    rm -rf "$data"
    echo "ok   $d"
  }
  export -f validate
  # One terraform validate of a wrapper root that calls every root as a module
  # (each variable passed from an unset wrapper variable: validate treats both
  # as unknown, as it does a root's variables) loads the aws provider's schema
  # once instead of twice per root. If it fails, every root is validated alone,
  # so the failure is reported for its own folder.
  validate_together() {
    local w=.cache/validate-all data i=0 d v
    rm -rf "$w" && mkdir -p "$w"
    for d in $dirs; do
      if grep -qs configuration_aliases "$d"/*.tf; then continue; fi
      i=$((i + 1))
      printf 'module "r%d" {\n  source = "../../%s"\n' "$i" "$d" >>"$w/main.tf"
      for v in $(sed -nE 's/^variable[[:space:]]+"([^"]+)".*/\1/p' "$d"/*.tf); do
        printf '  %s = var.r%d__%s\n' "$v" "$i" "$v" >>"$w/main.tf"
        printf 'variable "r%d__%s" {}\n' "$i" "$v" >>"$w/variables.tf"
      done
      printf '}\n' >>"$w/main.tf"
    done
    data=$(mktemp -d)
    if out=$(TF_DATA_DIR="$data" terraform -chdir="$w" init -backend=false -input=false -no-color 2>&1 \
        && TF_DATA_DIR="$data" terraform -chdir="$w" validate -no-color 2>&1); then
      rm -rf "$data" "$w"
      for d in $dirs; do
        if grep -qs configuration_aliases "$d"/*.tf; then echo "ok   $d (through its examples)"; else echo "ok   $d"; fi
      done
      return 0
    fi
    rm -rf "$data"
    printf 'the roots together failed; validating each alone\n%s\n' "$out"
    return 1
  }
  validate_together || { echo "$dirs" | xargs -P 2 -I{} bash -c 'validate {}' || fail=1; }
  step_done
  return $fail
}
validate_lane >.cache/lint-validate.log 2>&1 &
validate_pid=$!

step "terraform fmt"
terraform fmt -check -recursive -diff modules envs policies || fail=1

step "tflint (terraform + aws rulesets)"
"$TFLINT" --recursive --config "$PWD/.tflint.hcl" --no-color || fail=1

step "terraform-docs READMEs up to date"
for m in modules/*/ modules/*/modules/*/ modules/*/examples/*/; do
  [ -f "$m/versions.tf" ] || continue
  "$TERRAFORM_DOCS" -c .terraform-docs.yml --output-check "$m" >/dev/null 2>&1 \
    || { echo "README out of date: $m (run make docs)"; fail=1; }
done

step "actionlint (.github/workflows, examples/consumer-ci)"
"$ACTIONLINT" -no-color .github/workflows/*.yml examples/consumer-ci/.github/workflows/*.yml || fail=1

step_done
if ! wait "$validate_pid"; then fail=1; fi
cat .cache/lint-validate.log
if ! wait "$go_pid"; then fail=1; fi
cat .cache/lint-go.log

if [ "$fail" -ne 0 ]; then echo; echo "lint: FAILED (see the steps above)"; exit 1; fi
echo; echo "lint: ok"
