# dynops: `make demo` runs the end-to-end demo on a local emulator;
# `make test` runs everything CI runs (setup, lint, plan tests, emulator tests).
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Every target that needs the tools gets them from setup (built once, cached).
SETUP = eval "$$(scripts/setup.sh --print-env)"
# The policies package runs in its own stage (make policy), not twice.
GO_PACKAGES ?= $$(go list ./... | grep -v '/policies$$')
TEST_TIMEOUT ?= 30m

.PHONY: help demo test setup build consumer-zip export-scheduler-zip lint docs generate policy test-go test-unit bench mutate clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

demo: build consumer-zip ## end-to-end demo: emulator, apply envs/local, dynops drills, stop emulator
	$(SETUP) && bin/with-emulator -- bash scripts/demo.sh

test: setup lint policy test-go ## everything: setup, lint, policies, unit, plan and emulator tests

setup: ## detect and install the tools (go tools at pinned versions)
	scripts/setup.sh

build: ## build bin/dynops and bin/with-emulator
	go build -o bin/dynops ./cmd/dynops
	go build -o bin/with-emulator ./test/with-emulator

export-scheduler-zip: ## build bin/export-scheduler.zip, the Lambda of modules/dynamodb-export's schedule
	go run ./cmd/lambdazip -o bin/export-scheduler.zip ./cmd/export-scheduler

consumer-zip: ## build bin/consumer.zip: the example stream consumer (Go, provided.al2023, arm64)
	go run ./cmd/lambdazip -o bin/consumer.zip ./modules/stream-consumer/examples/go-consumer

lint: ## gofmt, go vet, terraform fmt/validate, tflint, terraform-docs up to date
	$(SETUP) && scripts/lint.sh

docs: ## regenerate the module READMEs with terraform-docs
	$(SETUP) && for m in modules/*/; do [ -f "$$m/versions.tf" ] || continue; "$$TERRAFORM_DOCS" -c .terraform-docs.yml "$$m" >/dev/null; done

generate: ## regenerate files rendered from Go (dynops-operator actions JSON + README table)
	go generate ./internal/permissions

policy: ## guard rules (Rego, OPA embedded) over plans: fixtures, every env root and example, the bad env denied
	$(SETUP) && go test -count=1 -v -timeout $(TEST_TIMEOUT) ./policies/ | grep -vE '^=== (RUN|PAUSE|CONT|NAME)|retry\.go:[0-9]+: terraform '

test-go: ## go test of every package, with per-test results and counts
	@mkdir -p .cache
	$(SETUP) && "$$GOTESTSUM" --format testname --jsonfile .cache/go-test.json -- -count=1 -timeout $(TEST_TIMEOUT) $(GO_PACKAGES)

test-unit: ## only the fast packages (no terraform, no emulator)
	go test -count=1 ./internal/... ./cmd/...

bench: build ## benchmarks on the emulator, printed as figures
	$(SETUP) && bin/with-emulator -- go test -run '^$$' -bench . -benchtime 1x ./internal/... ./test/...

mutate: ## mutation check (not in make test: takes hours): gremlins over internal/, every Rego deny rule, every validation message
	DYNOPS_SETUP_MUTATE=1 $(SETUP) && go run ./test/mutate -kind $${MUTATE_KINDS:-rego,tf,go} $${MUTATE_ONLY:+-only "$$MUTATE_ONLY"}

clean: ## remove build output and caches of this repo (not the tool cache)
	rm -rf bin .cache
