#!/usr/bin/env bash
# devctl: build, test and release helper for a multi-service repository.
set -euo pipefail
shopt -s nullglob extglob

# ---- section: globals
readonly PROG=${0##*/}
readonly ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
readonly DIST_DIR="$ROOT/dist"
declare -a SERVICES=(api worker scheduler gateway web)
declare -A PORTS=([api]=8080 [worker]=8081 [scheduler]=8082 [gateway]=8000 [web]=3000)
VERBOSE=0
DRY_RUN=0
JOBS=$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 4)
COLOR_RED=$'\e[31m' COLOR_GREEN=$'\e[32m' COLOR_RESET=$'\e[0m'

# ---- section: logging
log() {
  local level=$1; shift
  local ts
  ts=$(date '+%Y-%m-%dT%H:%M:%S')
  case $level in
    error) printf '%s %s[ERROR]%s %s\n' "$ts" "$COLOR_RED" "$COLOR_RESET" "$*" >&2 ;;
    ok)    printf '%s %s[ OK ]%s %s\n' "$ts" "$COLOR_GREEN" "$COLOR_RESET" "$*" ;;
    debug) (( VERBOSE )) && printf '%s [DEBUG] %s\n' "$ts" "$*" >&2 || true ;;
    *)     printf '%s [%s] %s\n' "$ts" "${level^^}" "$*" ;;
  esac
}

die() { log error "$@"; exit 1; }

run() {
  log debug "+ $*"
  if (( DRY_RUN )); then
    printf 'would run: %q ' "$@"; echo
    return 0
  fi
  "$@"
}

require() {
  local missing=()
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if ((${#missing[@]})); then
    die "missing tools: ${missing[*]}"
  fi
}

# ---- section: usage
usage() {
  cat <<USAGE
Usage: $PROG [-v] [-n] [-j N] COMMAND [ARGS...]

Commands:
  build [SERVICE...]   compile services into $BUILD_DIR
  test [PATTERN]       run unit tests, optionally filtered
  lint                 run linters over the tree
  release VERSION      tag, build and package a release
  up | down            start or stop the local stack
  logs SERVICE         follow a service's logs
  clean                remove build output
USAGE
}

# ---- section: argument parsing
parse_args() {
  while getopts ':vnj:h' opt; do
    case $opt in
      v) VERBOSE=1 ;;
      n) DRY_RUN=1 ;;
      j) JOBS=$OPTARG ;;
      h) usage; exit 0 ;;
      :) die "option -$OPTARG needs an argument" ;;
      \?) die "unknown option -$OPTARG" ;;
    esac
  done
  shift $((OPTIND - 1))
  COMMAND=${1:-}
  [[ -n $COMMAND ]] || { usage >&2; exit 2; }
  shift
  ARGS=("$@")
}

# ---- section: version helpers
git_version() {
  local v
  if v=$(git describe --tags --dirty --always 2>/dev/null); then
    echo "${v#v}"
  else
    echo "0.0.0-dev"
  fi
}

semver_ok() {
  [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]
}

bump() {
  local IFS=. major minor patch
  read -r major minor patch <<<"${1%%-*}"
  case ${2:-patch} in
    major) echo "$((major + 1)).0.0" ;;
    minor) echo "$major.$((minor + 1)).0" ;;
    patch) echo "$major.$minor.$((patch + 1))" ;;
  esac
}

# ---- section: build
build_service() {
  local svc=$1 out="$BUILD_DIR/$1"
  mkdir -p "$out"
  log info "building $svc -> $out"
  case $svc in
    web)
      ( cd "$ROOT/web" && run npm ci --silent && run npm run build -- --out-dir "$out" )
      ;;
    api|worker|scheduler|gateway)
      run go build -trimpath \
        -ldflags "-s -w -X main.version=$(git_version) -X main.commit=$(git rev-parse --short HEAD)" \
        -o "$out/$svc" "./cmd/$svc"
      ;;
    *) die "unknown service: $svc" ;;
  esac
  log ok "$svc built ($(du -sh "$out" | cut -f1))"
}

build_all() {
  local -a targets=("${@:-${SERVICES[@]}}")
  local pids=() svc
  for svc in "${targets[@]}"; do
    build_service "$svc" &
    pids+=($!)
    if (( ${#pids[@]} >= JOBS )); then
      wait "${pids[0]}"
      pids=("${pids[@]:1}")
    fi
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
}

# ---- section: test
run_tests() {
  local pattern=${1:-.}
  local report="$BUILD_DIR/test-report.txt"
  mkdir -p "$BUILD_DIR"
  log info "running tests matching '$pattern'"
  if ! go test -count=1 -race -run "$pattern" ./... 2>&1 | tee "$report" | grep -E '^(ok|FAIL|---)' ; then
    die "tests failed, see $report"
  fi
  local failed
  failed=$(grep -c '^--- FAIL' "$report" || true)
  (( failed == 0 )) || die "$failed test(s) failed"
  ( cd "$ROOT/web" && npm test -- --watchAll=false ) >>"$report" 2>&1
  log ok "all tests passed"
}

# ---- section: lint
lint() {
  require gofmt go shellcheck
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go') || true)
  if [[ -n $unformatted ]]; then
    printf '%s\n' "$unformatted" | sed 's/^/  needs gofmt: /'
    die "gofmt found problems"
  fi
  go vet ./...
  git ls-files -z '*.sh' | xargs -0 -r shellcheck -x
  find "$ROOT/scripts" -name '*.bash' -exec shellcheck -s bash {} +
  log ok "lint clean"
}

# ---- section: release
release() {
  local version=${1:-}
  [[ -n $version ]] || version=$(bump "$(git_version)" patch)
  semver_ok "$version" || die "not a semantic version: $version"
  if [[ -n $(git status --porcelain) ]]; then
    die "working tree is dirty"
  fi
  local branch
  branch=$(git rev-parse --abbrev-ref HEAD)
  [[ $branch == main ]] || die "releases are cut from main, not $branch"

  log info "releasing v$version"
  build_all
  mkdir -p "$DIST_DIR"
  local svc
  for svc in "${SERVICES[@]}"; do
    tar -C "$BUILD_DIR/$svc" -czf "$DIST_DIR/$svc-$version-$(uname -s | tr '[:upper:]' '[:lower:]').tar.gz" .
  done
  ( cd "$DIST_DIR" && sha256sum -- *.tar.gz > SHA256SUMS )
  cat > "$DIST_DIR/RELEASE_NOTES.md" <<NOTES
# Release v$version

Built on $(date -u '+%Y-%m-%d') from $(git rev-parse --short HEAD).

## Changes
$(git log --pretty='- %s (%h)' "$(git describe --tags --abbrev=0 2>/dev/null || git rev-list --max-parents=0 HEAD)"..HEAD)
NOTES
  run git tag -a "v$version" -m "Release v$version"
  run git push origin "v$version"
  log ok "released v$version"
}

# ---- section: local stack
compose() {
  if docker compose version >/dev/null 2>&1; then
    docker compose -f "$ROOT/deploy/compose.yaml" "$@"
  else
    docker-compose -f "$ROOT/deploy/compose.yaml" "$@"
  fi
}

wait_for_port() {
  local host=$1 port=$2 tries=${3:-30}
  until (echo > "/dev/tcp/$host/$port") 2>/dev/null; do
    (( --tries > 0 )) || return 1
    sleep 1
  done
}

stack_up() {
  compose up -d --build
  local svc
  for svc in "${!PORTS[@]}"; do
    if wait_for_port localhost "${PORTS[$svc]}"; then
      log ok "$svc is listening on ${PORTS[$svc]}"
    else
      log error "$svc did not come up"
      compose logs --tail=50 "$svc" >&2
    fi
  done
}

stack_down() {
  compose down --remove-orphans
  docker volume ls -q --filter "label=project=devctl" | xargs -r docker volume rm
}

# ---- section: logs
follow_logs() {
  local svc=${1:?service name required}
  [[ " ${SERVICES[*]} " == *" $svc "* ]] || die "unknown service: $svc"
  compose logs -f --since=10m "$svc" | while IFS= read -r line; do
    case $line in
      *ERROR*|*panic*) printf '%s%s%s\n' "$COLOR_RED" "$line" "$COLOR_RESET" ;;
      *) printf '%s\n' "$line" ;;
    esac
  done
}

# ---- section: clean
clean() {
  log info "removing build output"
  rm -rf -- "$BUILD_DIR" "$DIST_DIR"
  find "$ROOT" -type d \( -name node_modules -o -name .cache \) -prune -exec rm -rf {} +
  go clean -cache -testcache
}

# ---- section: config generation
gen_config() {
  local env=${1:-dev} out="$BUILD_DIR/config.$env.json"
  mkdir -p "$BUILD_DIR"
  {
    printf '{\n  "env": "%s",\n  "services": {\n' "$env"
    local first=1 svc
    for svc in "${SERVICES[@]}"; do
      (( first )) || printf ',\n'
      first=0
      printf '    "%s": {"port": %d, "replicas": %d}' "$svc" "${PORTS[$svc]}" "$( [[ $env == prod ]] && echo 3 || echo 1 )"
    done
    printf '\n  }\n}\n'
  } > "$out"
  if command -v jq >/dev/null; then
    jq . "$out" > "$out.tmp" && mv "$out.tmp" "$out"
  fi
  log ok "wrote $out"
}

# ---- section: database
db_migrate() {
  local dsn=${DATABASE_URL:-postgres://localhost:5432/devctl?sslmode=disable}
  local dir="$ROOT/migrations"
  local applied
  applied=$(psql "$dsn" -tAc 'select version from schema_migrations order by version' 2>/dev/null || true)
  local f
  for f in "$dir"/*.sql; do
    local v=${f##*/}; v=${v%%_*}
    if grep -qx "$v" <<<"$applied"; then
      log debug "skip $v"
      continue
    fi
    log info "applying $(basename "$f")"
    psql "$dsn" -v ON_ERROR_STOP=1 -1 -f "$f" && \
      psql "$dsn" -c "insert into schema_migrations(version) values ('$v')"
  done
}

db_dump() {
  local out="$BUILD_DIR/dump-$(date +%Y%m%d%H%M%S).sql.gz"
  pg_dump --no-owner "${DATABASE_URL:?}" | gzip -9 > "$out"
  log ok "dumped to $out"
}

# ---- section: certificates
gen_certs() {
  local dir="$BUILD_DIR/certs"
  mkdir -p "$dir"
  [[ -f $dir/ca.pem ]] || openssl req -x509 -newkey rsa:2048 -nodes -days 30 \
    -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" -subj '/CN=devctl-ca' 2>/dev/null
  local svc
  for svc in "${SERVICES[@]}"; do
    openssl req -newkey rsa:2048 -nodes -keyout "$dir/$svc-key.pem" \
      -out "$dir/$svc.csr" -subj "/CN=$svc.local" 2>/dev/null
    openssl x509 -req -in "$dir/$svc.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" \
      -CAcreateserial -out "$dir/$svc.pem" -days 30 2>/dev/null
    rm -f "$dir/$svc.csr"
  done
  log ok "certificates in $dir"
}

# ---- section: health report
health() {
  local svc status code
  printf '%-12s %-8s %s\n' SERVICE STATUS LATENCY
  for svc in "${SERVICES[@]}"; do
    local start end
    start=$(date +%s%N)
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://localhost:${PORTS[$svc]}/healthz" || echo 000)
    end=$(date +%s%N)
    if [[ $code == 200 ]]; then status=up; else status=down; fi
    printf '%-12s %-8s %dms\n' "$svc" "$status" $(( (end - start) / 1000000 ))
  done
}

# ---- section: dependency audit
audit() {
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  go list -m -json all > "$tmp/mods.json"
  ( cd "$ROOT/web" && npm audit --json > "$tmp/npm.json" ) || true
  local vulns
  vulns=$(govulncheck ./... 2>&1 | grep -c '^Vulnerability' || true)
  log info "go vulnerabilities: $vulns"
  python3 - "$tmp/npm.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
print("npm advisories:", len(data.get("vulnerabilities", {})))
PY
}

# ---- section: deploy
deploy() {
  local env=${1:?environment required} version=${2:-$(git_version)}
  local ctx
  case $env in
    staging) ctx=staging-cluster ;;
    prod)    ctx=prod-cluster
             read -r -p "Deploy v$version to PRODUCTION? [y/N] " answer
             [[ $answer == [yY]* ]] || die "aborted" ;;
    *)       die "unknown environment: $env" ;;
  esac
  local svc
  for svc in "${SERVICES[@]}"; do
    kubectl --context "$ctx" -n devctl set image "deployment/$svc" "$svc=registry.example.com/devctl/$svc:$version"
  done
  for svc in "${SERVICES[@]}"; do
    if ! kubectl --context "$ctx" -n devctl rollout status "deployment/$svc" --timeout=120s; then
      log error "$svc rollout failed, rolling back"
      kubectl --context "$ctx" -n devctl rollout undo "deployment/$svc"
      return 1
    fi
  done
  log ok "deployed v$version to $env"
}

push_images() {
  local version=${1:-$(git_version)} svc
  for svc in "${SERVICES[@]}"; do
    docker build -t "registry.example.com/devctl/$svc:$version" \
      --build-arg VERSION="$version" -f "$ROOT/deploy/Dockerfile.$svc" "$ROOT"
    docker push "registry.example.com/devctl/$svc:$version"
  done
}

# ---- section: remote maintenance
remote() {
  local host=$1; shift
  ssh -o BatchMode=yes -o ConnectTimeout=5 "deploy@$host" "$@"
}

rotate_logs() {
  local host
  while IFS= read -r host; do
    [[ -z $host || $host == \#* ]] && continue
    log info "rotating logs on $host"
    remote "$host" 'find /var/log/devctl -name "*.log" -mtime +7 -print0 | xargs -0 -r gzip -9'
    remote "$host" 'du -sh /var/log/devctl'
  done < "$ROOT/deploy/hosts.txt"
}

sync_assets() {
  local bucket=${ASSET_BUCKET:-s3://devctl-assets}
  rsync -az --delete --exclude '*.map' "$BUILD_DIR/web/" "deploy@cdn.example.com:/srv/assets/"
  aws s3 sync "$BUILD_DIR/web/static" "$bucket/static" --cache-control 'max-age=31536000,immutable'
}

# ---- section: backups
backup() {
  local stamp dest
  stamp=$(date +%Y%m%d-%H%M%S)
  dest="$ROOT/backups/$stamp"
  mkdir -p "$dest"
  db_dump
  cp "$BUILD_DIR"/dump-*.sql.gz "$dest/" 2>/dev/null || true
  tar -C "$ROOT" -czf "$dest/config.tgz" deploy/ migrations/ 2>/dev/null
  # keep the newest ten backups
  ls -1dt "$ROOT"/backups/*/ 2>/dev/null | tail -n +11 | while read -r old; do
    log info "pruning $old"
    rm -rf -- "$old"
  done
  log ok "backup in $dest"
}

restore() {
  local from=${1:?backup directory required}
  [[ -d $from ]] || die "no such backup: $from"
  local dump
  dump=$(ls -1t "$from"/dump-*.sql.gz | head -n 1)
  [[ -n $dump ]] || die "no dump in $from"
  gunzip -c "$dump" | psql "${DATABASE_URL:?}" -v ON_ERROR_STOP=1
  tar -C "$ROOT" -xzf "$from/config.tgz"
}

# ---- section: git hooks
install_hooks() {
  local hooks="$ROOT/.git/hooks"
  cat > "$hooks/pre-commit" <<'HOOK'
#!/usr/bin/env bash
set -e
files=$(git diff --cached --name-only --diff-filter=ACM | grep '\.go$' || true)
[ -z "$files" ] && exit 0
unformatted=$(gofmt -l $files)
if [ -n "$unformatted" ]; then
  echo "gofmt needed:" $unformatted >&2
  exit 1
fi
HOOK
  cat > "$hooks/commit-msg" <<HOOK
#!/usr/bin/env bash
grep -qE '^(feat|fix|docs|chore|refactor|test)(\(.+\))?: ' "\$1" || {
  echo "commit message must follow conventional commits (installed by $PROG)" >&2
  exit 1
}
HOOK
  chmod +x "$hooks/pre-commit" "$hooks/commit-msg"
  log ok "hooks installed"
}

# ---- section: benchmarks
bench() {
  local count=${1:-5} out="$BUILD_DIR/bench"
  mkdir -p "$out"
  local base head
  base=$(git merge-base HEAD origin/main)
  head=$(git rev-parse HEAD)
  git stash push --include-untracked --quiet || true
  git checkout --quiet "$base"
  go test -run '^$' -bench . -count "$count" ./... > "$out/old.txt"
  git checkout --quiet "$head"
  git stash pop --quiet || true
  go test -run '^$' -bench . -count "$count" ./... > "$out/new.txt"
  if command -v benchstat >/dev/null; then
    benchstat "$out/old.txt" "$out/new.txt" | tee "$out/diff.txt"
  else
    log info "install benchstat to compare: go install golang.org/x/perf/cmd/benchstat@latest"
  fi
}

# ---- section: changelog
changelog() {
  local from=${1:-$(git describe --tags --abbrev=0)} to=${2:-HEAD}
  local type subject hash
  declare -A sections=()
  while IFS=$'\t' read -r hash subject; do
    type=${subject%%:*}
    type=${type%%(*}
    case $type in
      feat) sections[Features]+="- ${subject#*: } ($hash)"$'\n' ;;
      fix)  sections[Fixes]+="- ${subject#*: } ($hash)"$'\n' ;;
      *)    sections[Other]+="- $subject ($hash)"$'\n' ;;
    esac
  done < <(git log --pretty=$'%h\t%s' "$from..$to")
  local name
  for name in Features Fixes Other; do
    [[ -n ${sections[$name]:-} ]] || continue
    printf '## %s\n\n%s\n' "$name" "${sections[$name]}"
  done
}

# ---- section: docs
docs() {
  local out="$BUILD_DIR/docs"
  mkdir -p "$out"
  for f in "$ROOT"/docs/*.md; do
    local name=${f##*/}
    pandoc --standalone --toc -f gfm -t html5 -o "$out/${name%.md}.html" "$f" || \
      log error "pandoc failed on $name"
  done
  go doc -all ./... > "$out/api.txt" 2>/dev/null || true
  ( cd "$out" && python3 -m http.server 8088 >/dev/null 2>&1 & echo $! > "$out/.server.pid" )
  log ok "docs at http://localhost:8088"
}

# ---- section: ci matrix
ci() {
  local goos goarch failed=0
  for goos in linux darwin windows; do
    for goarch in amd64 arm64; do
      if [[ $goos == windows && $goarch == arm64 ]]; then continue; fi
      log info "cross-compiling $goos/$goarch"
      if ! GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build -o /dev/null ./...; then
        log error "$goos/$goarch failed"
        failed=$((failed + 1))
      fi
    done
  done
  (( failed == 0 )) || die "$failed target(s) failed"
  run_tests
  lint
}

# ---- section: environment check
doctor() {
  local ok=1 tool version
  for tool in go node npm docker kubectl psql openssl jq; do
    if version=$("$tool" --version 2>/dev/null | head -n 1); then
      printf '  %-10s %s\n' "$tool" "$version"
    else
      printf '  %-10s %s\n' "$tool" "MISSING"
      ok=0
    fi
  done
  [[ -S /var/run/docker.sock ]] || { log error "docker socket not found"; ok=0; }
  [[ $(ulimit -n) -ge 4096 ]] || log info "raise the open-file limit: ulimit -n 4096"
  (( ok )) && log ok "environment looks good" || return 1
}

# ---- section: profiling
profile() {
  local svc=${1:-api} seconds=${2:-30} out="$BUILD_DIR/pprof"
  mkdir -p "$out"
  local port=${PORTS[$svc]:?unknown service $svc}
  log info "collecting a ${seconds}s CPU profile from $svc"
  curl -sf "http://localhost:$port/debug/pprof/profile?seconds=$seconds" -o "$out/$svc.cpu.pb.gz" || die "profile failed"
  curl -sf "http://localhost:$port/debug/pprof/heap" -o "$out/$svc.heap.pb.gz"
  go tool pprof -top -nodecount=25 "$out/$svc.cpu.pb.gz" | sed -n '1,30p'
  if [[ ${OPEN_UI:-0} == 1 ]]; then
    go tool pprof -http=:6060 "$out/$svc.cpu.pb.gz" &
  fi
}

load_test() {
  local svc=${1:-gateway} rate=${2:-200} duration=${3:-30s}
  local target="http://localhost:${PORTS[$svc]}/"
  echo "GET $target" | vegeta attack -rate="$rate" -duration="$duration" | tee "$BUILD_DIR/results.bin" | vegeta report
  vegeta plot < "$BUILD_DIR/results.bin" > "$BUILD_DIR/plot.html"
}

# ---- section: translations
i18n_extract() {
  local pot="$ROOT/web/locales/messages.pot"
  find "$ROOT/web/src" -type f \( -name '*.ts' -o -name '*.tsx' \) -print0 |
    xargs -0 grep -ho "t('[^']*')" |
    sed -E "s/t\('([^']*)'\)/\1/" |
    sort -u |
    awk 'BEGIN { print "msgid \"\"\nmsgstr \"\"\n" } { printf "msgid \"%s\"\nmsgstr \"\"\n\n", $0 }' > "$pot"
  local po
  for po in "$ROOT"/web/locales/*.po; do
    msgmerge --quiet --update --backup=none "$po" "$pot"
    local missing
    missing=$(msgattrib --untranslated "$po" | grep -c '^msgid' || true)
    printf '%-8s %3d untranslated\n' "$(basename "$po" .po)" "$((missing > 0 ? missing - 1 : 0))"
  done
}

# ---- section: cleanup on exit
on_exit() {
  local rc=$?
  if [[ -f "$BUILD_DIR/docs/.server.pid" ]]; then
    kill "$(cat "$BUILD_DIR/docs/.server.pid")" 2>/dev/null || true
    rm -f "$BUILD_DIR/docs/.server.pid"
  fi
  (( rc == 0 )) || log error "$PROG exited with status $rc"
  exit "$rc"
}
trap on_exit EXIT
trap 'log error "interrupted"; exit 130' INT TERM

# ---- section: main
main() {
  parse_args "$@"
  case $COMMAND in
    build)   build_all "${ARGS[@]}" ;;
    test)    run_tests "${ARGS[@]}" ;;
    lint)    lint ;;
    release) release "${ARGS[@]}" ;;
    up)      stack_up ;;
    down)    stack_down ;;
    logs)    follow_logs "${ARGS[@]}" ;;
    clean)   clean ;;
    config)  gen_config "${ARGS[@]}" ;;
    migrate) db_migrate ;;
    dump)    db_dump ;;
    certs)   gen_certs ;;
    health)  health ;;
    audit)   audit ;;
    deploy)  deploy "${ARGS[@]}" ;;
    push)    push_images "${ARGS[@]}" ;;
    rotate)  rotate_logs ;;
    sync)    sync_assets ;;
    backup)  backup ;;
    restore) restore "${ARGS[@]}" ;;
    hooks)   install_hooks ;;
    bench)   bench "${ARGS[@]}" ;;
    changelog) changelog "${ARGS[@]}" ;;
    docs)    docs ;;
    ci)      ci ;;
    doctor)  doctor ;;
    profile) profile "${ARGS[@]}" ;;
    load)    load_test "${ARGS[@]}" ;;
    i18n)    i18n_extract ;;
    help)    usage ;;
    *)       usage >&2; die "unknown command: $COMMAND" ;;
  esac
}

main "$@"
