#!/usr/bin/env bash
# plan-env.sh ENV [terraform plan flags...]: `make plan ENV=...`, a terraform
# plan of envs/ENV that works on a fresh machine. The provider comes from the
# plugin mirror scripts/setup.sh configures (TF_CLI_CONFIG_FILE), so init
# never needs the registry.
#   local:          against the emulator at AWS_ENDPOINT_URL (the sandbox,
#                   `eval "$(bin/with-emulator up)"`), or a fresh emulator for
#                   this plan when none is set; local state in .cache/plan-local.
#   dev, stg, prod: against the account of your AWS credentials, with the
#                   env's S3 state: BACKEND_CONFIG="bucket=NAME" is passed to
#                   init as -backend-config (see the env's main.tf).
# What an emulator plan always shows: docs/day2.md, "Planning an env by hand".
set -euo pipefail
cd "$(dirname "$0")/.."
env=${1:-}
if [ -z "$env" ] || [ ! -f "envs/$env/main.tf" ]; then
  echo "plan-env: ENV=${env:-<unset>} is not an env root under envs/ (have: $(cd envs && ls -d */ | tr -d / | tr '\n' ' ')); run: make plan ENV=local" >&2
  exit 2
fi
shift
eval "$(scripts/setup.sh --print-env)"
export TF_DATA_DIR="$PWD/.cache/plan-$env/tf" TF_IN_AUTOMATION=1
mkdir -p "$TF_DATA_DIR"

if [ "$env" = local ]; then
  if [ -z "${AWS_ENDPOINT_URL:-}" ]; then
    echo "plan-env: no AWS_ENDPOINT_URL: planning envs/local against a fresh emulator (every resource is new); for the sandbox's: eval \"\$(bin/with-emulator up)\"" >&2
    [ -x bin/with-emulator ] || go build -o bin/with-emulator ./test/tools/with-emulator
    exec bin/with-emulator -- "$0" local "$@"
  fi
  case "$AWS_ENDPOINT_URL" in
    http://127.*|http://localhost*|http://\[::1\]*) ;;
    *) echo "plan-env: AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL is not a loopback URL: envs/local only ever talks to a local emulator" >&2; exit 2 ;;
  esac
  terraform -chdir=envs/local init -input=false -no-color >/dev/null
  exec terraform -chdir=envs/local plan -input=false -state="$PWD/.cache/plan-local/terraform.tfstate" "$@"
fi

if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
  echo "plan-env: AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL is set: envs/$env plans against AWS itself; unset it first (eval \"\$(bin/with-emulator down)\" ends the sandbox)" >&2
  exit 2
fi
init=(-input=false)
[ -z "${BACKEND_CONFIG:-}" ] || init+=("-backend-config=$BACKEND_CONFIG")
terraform -chdir="envs/$env" init "${init[@]}"
exec terraform -chdir="envs/$env" plan -input=false "$@"
