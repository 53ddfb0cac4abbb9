#!/usr/bin/env bash
# make test-cpu: runs the `go test` stage (make test-go; GO_PACKAGES narrows
# it) and prints where its CPU went: every terraform command (user+sys of
# terraform and the providers it started, from a shim first on PATH), every
# emulator (moto_server's user+sys, sampled from /proc each second while it
# runs), and the rest (Go builds, test binaries, dynops runs). Linux only (it
# reads /proc). Figures are CPU-seconds, comparable on a loaded machine where
# wall times are not.
set -euo pipefail
cd "$(dirname "$0")/.."
real=$(command -v terraform) || { echo "test-cpu: terraform not on PATH: run scripts/setup.sh first" >&2; exit 2; }
command -v python3 >/dev/null || { echo "test-cpu: needs python3 (moto's interpreter) for the sampler and the summary" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dynops-test-cpu-XXXXXX")
trap 'touch "$work/stop"; rm -rf "$work"' EXIT
mkdir -p "$work/bin"
# The shim: the real terraform, then one line per command:
# cwd|the caller's cwd (the test's package)|subcommand|exit code|start|end|
# user+sys of its children.
cat >"$work/bin/terraform" <<SHIM
#!/usr/bin/env bash
s=\$(date +%s.%N)
"$real" "\$@"
rc=\$?
e=\$(date +%s.%N)
times >"$work/t.\$\$"
echo "\$(pwd)|\$(readlink /proc/\$PPID/cwd)|\$1|\$rc|\$s|\$e|\$(sed -n 2p "$work/t.\$\$")" >>"$work/terraform.log"
rm -f "$work/t.\$\$"
exit \$rc
SHIM
chmod +x "$work/bin/terraform"
tag="DYNOPS_TEST_CPU_RUN=$$"
python3 - "$work" "$tag" <<'PY' &
import os, sys, time
work, tag = sys.argv[1], sys.argv[2].encode()
tck = os.sysconf("SC_CLK_TCK")
seen = {}
while not os.path.exists(os.path.join(work, "stop")):
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv0 = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
            if not any(b"moto_server" in a for a in argv0) or b"python" not in argv0[0]:
                continue
            if tag not in open(f"/proc/{p}/environ", "rb").read():
                continue
            st = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            seen[p] = ((int(st[11]) + int(st[12])) / tck, os.readlink(f"/proc/{p}/cwd"))
        except OSError:
            pass
    with open(os.path.join(work, "moto.tmp"), "w") as f:
        for p, (cpu, cwd) in seen.items():
            f.write(f"{cwd}|{cpu}\n")
    os.replace(os.path.join(work, "moto.tmp"), os.path.join(work, "moto.log"))
    time.sleep(1)
PY
start=$(date +%s)
rc=0
env "${tag}" PATH="$work/bin:$PATH" make --no-print-directory test-go || rc=$?
wall=$(( $(date +%s) - start ))
times >"$work/times"
touch "$work/stop"; sleep 2
python3 - "$work" "$(pwd)" "$wall" <<'PY'
import collections, json, os, re, sys
work, root, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
def sec(x):
    m = re.match(r"(\d+)m([\d.]+)s", x)
    return int(m[1]) * 60 + float(m[2])
u, s = open(os.path.join(work, "times")).read().split("\n")[1].split()
total = sec(u) + sec(s)
# Each package's top-level tests, from gotestsum's JSON; a test's temp
# folders are named after it (then a random number, or a subtest's name).
tests = collections.defaultdict(set)
for line in open(os.path.join(root, ".cache", "go-test.json")):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("Test") and "/" not in e["Test"]:
        tests[e["Package"].rsplit("/dynops/", 1)[-1]].add(e["Test"])
def test_of(cwd, pkg):
    m = re.search(r"/(Test[^/]*)/\d+/", cwd)
    if not m:
        return os.path.relpath(cwd, root)
    names = [n for n in tests[pkg] if m[1].startswith(n)]
    return max(names, key=len) if names else m[1]
tf_cmd, tf_test, tf_n = collections.Counter(), collections.Counter(), collections.Counter()
log = os.path.join(work, "terraform.log")
for line in open(log) if os.path.exists(log) else []:
    cwd, caller, sub, rc, start, end, t = line.rstrip("\n").split("|")
    cu, cs = t.split()
    c = sec(cu) + sec(cs)
    pkg = os.path.relpath(caller, root)
    key = pkg + " " + test_of(cwd, pkg)
    tf_cmd[sub] += c; tf_test[key] += c; tf_n[key] += 1
moto = collections.Counter()
log = os.path.join(work, "moto.log")
for line in open(log) if os.path.exists(log) else []:
    cwd, cpu = line.rstrip("\n").rsplit("|", 1)
    moto[os.path.relpath(cwd, root)] += float(cpu)
tf, mo = sum(tf_cmd.values()), sum(moto.values())
print(f"== test-cpu: go test stage {wall} s wall, {total:.0f} CPU-s: terraform {tf:.0f} ({100*tf/max(total,1):.0f} %, {sum(tf_n.values())} commands), "
      f"emulator {mo:.0f} ({100*mo/max(total,1):.0f} %), the rest {total-tf-mo:.0f} (Go builds, test binaries, dynops)")
print("terraform by subcommand (CPU-s): " + ", ".join(f"{k} {v:.0f}" for k, v in tf_cmd.most_common()))
print("terraform by test (CPU-s, commands):")
for k, v in tf_test.most_common(15):
    print(f"  {v:6.0f} {tf_n[k]:4d}  {k}")
print("emulator by package (CPU-s):")
for k, v in moto.most_common(10):
    print(f"  {v:6.0f}  {k}")
PY
exit $rc
