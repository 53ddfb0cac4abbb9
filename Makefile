# dynops: `make demo` runs the end-to-end demo on a local emulator;
# `make test` runs everything CI runs (setup, lint, plan tests, emulator tests).
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Every target that needs the tools gets them from setup (built once, cached).
SETUP = eval "$$(scripts/setup.sh --print-env)"
# The policies package runs in its own stage (make policy), not twice. The
# longest packages are listed first so that go test starts them first: listed
# in import-path order, test/modules/table (about 9 min) ran alone at the end.
SLOW_PACKAGES = ./test/modules/table ./test/modules/dr ./test/modules/access ./test/robustness/badinput ./test/modules/alarms
GO_PACKAGES ?= $$( (go list $(SLOW_PACKAGES); go list ./...) | awk '!seen[$$0]++' | grep -v '/policies$$')
TEST_TIMEOUT ?= 30m
CHAOS_TIMEOUT ?= 150m

.PHONY: help demo plan test test-long test-cpu setup build consumer-zip export-scheduler-zip readiness-zip lint vulncheck docs generate policy test-go test-unit test-badinput bench bench-memory bench-go chaos release mutate clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

demo: build consumer-zip ## end-to-end demo: emulator, apply envs/local, dynops drills, stop emulator
	$(SETUP) && bin/with-emulator -- bash scripts/demo.sh

test: ## everything: setup, lint, policies, unit, plan and emulator tests (each stage's wall and CPU time)
	@scripts/test-stages.sh setup lint policy test-go

setup: ## detect and install the tools (go tools at pinned versions)
	scripts/setup.sh

build: ## build bin/dynops and bin/with-emulator
	go build -o bin/dynops ./cmd/dynops
	go build -o bin/with-emulator ./test/tools/with-emulator

export-scheduler-zip: ## build bin/export-scheduler.zip, the Lambda of modules/dynamodb-export's schedule
	go run ./cmd/lambdazip -o bin/export-scheduler.zip ./cmd/export-scheduler

readiness-zip: ## build bin/readiness.zip, the readiness Lambda (guideline check, restore test, metrics; internal/readiness)
	go run ./cmd/lambdazip -o bin/readiness.zip ./cmd/readiness

consumer-zip: ## build bin/consumer.zip: the example stream consumer (Go, provided.al2023, arm64)
	go run ./cmd/lambdazip -o bin/consumer.zip ./modules/stream-consumer/examples/go-consumer

plan: ## terraform plan of envs/$(ENV) on a fresh machine: ENV=local against the emulator (the sandbox's, or a fresh one), dev/stg/prod against your account (BACKEND_CONFIG=bucket=NAME)
	scripts/plan-env.sh "$(ENV)"

lint: ## gofmt, go vet, terraform fmt/validate, tflint, terraform-docs up to date
	$(SETUP) && scripts/lint.sh

docs: ## regenerate the module and example READMEs (terraform-docs) and the CLI reference docs/cli/*.md (cobra)
	$(SETUP) && for m in modules/*/ modules/*/modules/*/ modules/*/examples/*/; do [ -f "$$m/versions.tf" ] || continue; "$$TERRAFORM_DOCS" -c .terraform-docs.yml "$$m" >/dev/null; done
	go run ./internal/clidoc/gen

generate: ## regenerate files rendered from Go (dynops-operator actions JSON + README table)
	go generate ./internal/permissions

policy: ## guard rules (Rego, OPA embedded) over plans: fixtures, every env root and example, the bad env denied
	$(SETUP) && go test -count=1 -v -timeout $(TEST_TIMEOUT) ./policies/ | grep -vE '^=== (RUN|PAUSE|CONT|NAME)|retry\.go:[0-9]+: terraform '

test-go: ## go test of every package, with per-test results and counts (dynops built once for the suites that run it as a process)
	@mkdir -p .cache
	$(SETUP) && go build -o .cache/test-bin/dynops ./cmd/dynops && \
	  DYNOPS_TEST_BIN=$(CURDIR)/.cache/test-bin/dynops "$$GOTESTSUM" --format testname --jsonfile .cache/go-test.json -- -count=1 -timeout $(TEST_TIMEOUT) $(GO_PACKAGES)

test-long: ## the long suites make test leaves out for the CI budget: the day-2 walk (TestDay2), every legacy shape adoption, every example's empty second plan, the runbook journeys (about 16 min)
	$(SETUP) && DYNOPS_TEST_LONG=1 go test -count=1 -timeout $(TEST_TIMEOUT) -run 'TestDay2$$|TestAdoptSingleTableShapes|TestEveryExampleSecondPlanIsEmpty|Journey' ./test/modules/table/ ./test/modules/examples/ ./test/cli/runbook/

test-cpu: ## the go test stage with its CPU split: terraform (by subcommand and test), the emulator (by package), the rest
	@scripts/test-cpu.sh

test-badinput: ## the bad-input suite: the real binary against the emulator, every guard, state snapshots
	go test -count=1 ./test/robustness/badinput/

# The packages of internal/ and cmd/ whose tests start no emulator: those
# importing test/helpers/harness or test/helpers/emulator run in test-go.
UNIT_PACKAGES = $$(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./internal/... ./cmd/... | awk '!/test\/helpers\/(harness|emulator)/ {print $$1}')

test-unit: ## only the fast packages (no terraform, no emulator: DYNOPS_NO_EMULATOR refuses one)
	DYNOPS_NO_EMULATOR=1 go test -count=1 $(UNIT_PACKAGES)

BENCH_FLAGS ?=
bench: build ## dynops beside the raw client (Go SDK, gzip -t) in one run, then ONE MACHINE (per core, RSS 10x/1x): ratios with their goals; exits 1 naming a row below its goal
	$(SETUP) && bin/with-emulator -- go run ./test/tools/bench $(BENCH_FLAGS)

bench-memory: build ## diff's max RSS at 20,000 and 200,000 items per table + heap profile (minutes)
	$(SETUP) && bin/with-emulator -- go run ./test/tools/bench -memory -items 20000 $(BENCH_FLAGS)

bench-go: build ## the go test benchmarks (redrive concurrency, diff/repair beside the AWS CLI)
	$(SETUP) && bin/with-emulator -- go test -run '^$$' -bench . -benchtime 1x ./internal/... ./test/...

chaos: ## every long-running command under 10 %/30 % injected faults (5 seeds; HTTP shapes and toxiproxy TCP faults) and 20 SIGKILLs each; prints command x fault -> result
	@mkdir -p .cache
	$(SETUP) && DYNOPS_CHAOS=full CHAOS_REPORT=$(CURDIR)/.cache/chaos.txt go test -count=1 -timeout $(CHAOS_TIMEOUT) -run 'TestCommandsUnderFaults|TestCommandsUnderTCPFaults|TestKilledAndRerun|TestDRKilledAndRerun|TestRestoreKilledAndRerun' ./test/robustness/chaos/ >.cache/chaos.log 2>&1 \
	  || { grep -E -- '--- FAIL|Error' .cache/chaos.log | head -40; cat .cache/chaos.txt 2>/dev/null; exit 1; }
	@cat .cache/chaos.txt

vulncheck: ## govulncheck on the code and its dependencies; prints SKIPPED where vuln.go.dev is unreachable
	scripts/govulncheck.sh

release: ## dynops for linux/darwin x amd64/arm64 in dist/, version + commit stamped, SHA256SUMS
	scripts/release.sh

mutate: ## mutation check (not in make test: takes hours): gremlins over internal/, every Rego deny rule, every validation message
	export DYNOPS_SETUP_MUTATE=1 && $(SETUP) && go run ./test/tools/mutate -kind $${MUTATE_KINDS:-rego,tf,go} $${MUTATE_ONLY:+-only "$$MUTATE_ONLY"} $${MUTATE_PACKAGES:+-packages "$$MUTATE_PACKAGES"}

clean: ## remove build output and caches of this repo (not the tool cache)
	rm -rf bin .cache dist

.PHONY: bench-migrate test-migrate-big
bench-migrate: ## migration benchmark: backfill vs raw BatchWriteItem and raw copy, catch-up lag (prints ratios)
	$(SETUP) && go test -count=1 -run '^$$' -bench BenchmarkMigrate -benchtime 1x -timeout 20m ./test/cli/migrate/

test-migrate-big: ## the migration end to end with 50,000 items (CI runs 10,000 in test-go)
	$(SETUP) && DYNOPS_MIGRATE_ITEMS=50000 go test -count=1 -run TestMigrateEndToEnd -timeout 60m ./test/cli/migrate/
