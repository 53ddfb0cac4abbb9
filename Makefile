# dynops: `make demo` runs the end-to-end demo on a local emulator;
# `make test` runs everything CI runs (setup, lint, plan tests, emulator tests).
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Every target that needs the tools gets them from setup (built once, cached).
SETUP = eval "$$(scripts/setup.sh --print-env)"
GO_PACKAGES ?= ./...
TEST_TIMEOUT ?= 30m

.PHONY: help demo test setup build consumer-zip lint docs test-go test-unit bench clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

demo: build consumer-zip ## end-to-end demo: emulator, apply envs/local, dynops drills, stop emulator
	$(SETUP) && bin/with-emulator -- bash scripts/demo.sh

test: setup lint test-go ## everything: setup, lint, unit, plan and emulator tests

setup: ## detect and install the tools (go tools at pinned versions)
	scripts/setup.sh

build: ## build bin/dynops and bin/with-emulator
	go build -o bin/dynops ./cmd/dynops
	go build -o bin/with-emulator ./test/with-emulator

consumer-zip: ## build bin/consumer.zip: the example stream consumer (Go, provided.al2023, arm64)
	go run ./cmd/lambdazip -o bin/consumer.zip ./modules/stream-consumer/examples/go-consumer

lint: ## gofmt, go vet, terraform fmt/validate, tflint, terraform-docs up to date
	$(SETUP) && scripts/lint.sh

docs: ## regenerate the module READMEs with terraform-docs
	$(SETUP) && for m in modules/*/; do "$$TERRAFORM_DOCS" -c .terraform-docs.yml "$$m" >/dev/null; done

test-go: ## go test of every package, with per-test results and counts
	@mkdir -p .cache
	$(SETUP) && "$$GOTESTSUM" --format testname --jsonfile .cache/go-test.json -- -count=1 -timeout $(TEST_TIMEOUT) $(GO_PACKAGES)

test-unit: ## only the fast packages (no terraform, no emulator)
	go test -count=1 ./internal/... ./cmd/...

bench: build ## benchmarks on the emulator, printed as figures
	$(SETUP) && bin/with-emulator -- go test -run '^$$' -bench . -benchtime 1x ./internal/... ./test/...

clean: ## remove build output and caches of this repo (not the tool cache)
	rm -rf bin .cache
