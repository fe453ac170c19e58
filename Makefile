# Assay: `make up` runs the platform locally, `make test` runs every test.
SHELL := /bin/bash
MODULES := pkg services/gateway services/registry services/runtime services/tracing services/writer services/console deployments/helm cli
SERVICES := gateway registry runtime tracing writer console
TEST_FLAGS ?= -race -count=1 -timeout 15m
# go test starts the packages in the order given, two at a time on two
# cores: the modules with the longest test packages (the console's browser
# tests, the evaluation runs, the tracing and gateway end-to-end tests) go
# first, so the run does not end on one of them alone.
TEST_MODULES := services/console services/runtime services/tracing services/gateway services/registry pkg services/writer deployments/helm cli
# Each fuzz target runs this long after the tests (scripts/fuzz.sh); 0 skips.
TEST_FUZZTIME ?= 4s

.DEFAULT_GOAL := help

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

up: ## install what is missing, build the console, start dependencies and the six services, print the URLs, admin key and first user
	@scripts/platform.sh up

down: ## stop what `make up` started
	@scripts/platform.sh down

deps-up: ## start PostgreSQL, ClickHouse and NATS only (data in .run/)
	@scripts/deps.sh up

test-deps: ## deps-up, installing also what only the tests need (ZooKeeper and a Java runtime, Chromium)
	@scripts/deps.sh up test

test: test-deps openapi-lint console ## install the test-only packages, start the dependencies, lint the OpenAPI document, build the console and run its Vitest tests, run go test -race over every module (the console's e2e tests in Chromium among them), then every fuzz target for TEST_FUZZTIME
	@scripts/console.sh test
	@eval "$$(scripts/deps.sh env)" && go test $(TEST_FLAGS) $(addprefix ./,$(addsuffix /...,$(TEST_MODULES)))
	@if [ "$(TEST_FUZZTIME)" != 0 ]; then eval "$$(scripts/deps.sh env)" && scripts/fuzz.sh $(TEST_FUZZTIME); fi

console: ## build the web console (npm ci && npm run build in services/console/web) into web/dist, which the console service embeds
	@scripts/console.sh build

openapi-lint: ## lint the merged OpenAPI document with Redocly's recommended rules (pinned in tools/openapi)
	@scripts/openapi-lint.sh

apiclient: ## regenerate every client generated from the OpenAPI document: pkg/testutil/apiclient (ogen, pinned in tools/ogen), the console's src/api/schema.gen.ts (openapi-typescript, pinned in tools/openapi) and the CLI's cli/internal/api/gen (ogen); TestClientIsCurrent, TestConsoleTypesAreCurrent and the CLI's TestTypesAreCurrent ask for it when the document changed
	@scripts/apiclient.sh

build: ## build the six service binaries (run make console first for the console's app) and the assay CLI into bin/
	@for s in $(SERVICES); do go build -trimpath -o bin/$$s ./services/$$s/cmd/$$s || exit 1; done
	@go build -trimpath -o bin/assay ./cli/cmd/assay

vet: ## go vet every module
	@go vet $(addprefix ./,$(addsuffix /...,$(MODULES)))

fmt: ## gofmt every module
	@gofmt -l -w pkg services deployments cli

tidy: ## go mod tidy per module, then go work sync
	@for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy) || exit 1; done; go work sync

# Images: one per service from deployments/Dockerfile, named as the chart
# pulls them by default (<registry>/<prefix><service>:<appVersion>, values
# image.*; deployments/helm/cluster_test.go checks the two agree).
IMAGE_REPOSITORY_PREFIX ?= ghcr.io/assayhq/assay-
IMAGE_TAG ?= $(shell sed -n 's/^appVersion: *"*\([^"]*\)"*$$/\1/p' deployments/helm/assay/Chart.yaml)
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
CONTAINER_ENGINE ?= $(shell command -v docker 2>/dev/null || command -v podman 2>/dev/null)

images: $(addprefix image-,$(SERVICES)) ## build the six service images with docker or podman, tagged <IMAGE_REPOSITORY_PREFIX><service>:<IMAGE_TAG> (default: the names the chart pulls)

$(addprefix image-,$(SERVICES)): image-%:
	@test -n "$(CONTAINER_ENGINE)" || { echo "make images needs docker or podman (or CONTAINER_ENGINE=...)" >&2; exit 1; }
	$(CONTAINER_ENGINE) build -f deployments/Dockerfile --build-arg SERVICE=$* --build-arg VERSION=$(IMAGE_TAG) --build-arg REVISION=$(IMAGE_REVISION) -t $(IMAGE_REPOSITORY_PREFIX)$*:$(IMAGE_TAG) .

config-docs: ## write docs/configuration.md, every service's environment variables, from the code
	@go run ./pkg/testutil/configtest/cmd/configdocs

fuzz: deps-up ## run each fuzz target for FUZZTIME (default 30s; FUZZ_TARGETS=regexp picks some)
	@scripts/fuzz.sh $${FUZZTIME:-30s}

.PHONY: help up down deps-up test-deps test console openapi-lint apiclient build vet fmt tidy config-docs fuzz images $(addprefix image-,$(SERVICES))

generate: ## regenerate pkg/genproto from proto/ (needs protoc and protoc-gen-go)
	@protoc -I proto --go_out=pkg/genproto --go_opt=module=github.com/assayhq/assay/pkg/genproto $$(find proto -name '*.proto')
.PHONY: generate
