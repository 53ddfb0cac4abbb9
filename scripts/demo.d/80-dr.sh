# shellcheck shell=bash
# DR drill (DDB-DR-01) on the local pair: local-hoge-session in eu-west-1 and
# its same-name stand-in in eu-central-1 (moto has no global tables, hence
# --allow-unreplicated), the pointer in both regions and Route 53 failover
# records from modules/dr.
DR_TABLE=local-hoge-session
DR_FLAGS=(--table "$DR_TABLE" --regions eu-west-1,eu-central-1 --allow-unreplicated)
while IFS= read -r hc; do DR_FLAGS+=(--health-check "$hc"); done < <(
  terraform -chdir=envs/local output -state="$DEMO_STATE" -json dr |
    python3 -c 'import json,sys; [print(f"{r}={i}") for r,i in json.load(sys.stdin)["health_check_ids"].items()]')

step "8. dynops dr status: both regions, the pointer, fences, verdict"
dynops dr status "${DR_FLAGS[@]}"

step "9. dynops dr failover: a dry run prints every step"
dynops dr failover "${DR_FLAGS[@]}" --to eu-central-1

step "10. dynops dr drill: failover and failback end to end, timed (the measured RTO)"
dynops dr drill "${DR_FLAGS[@]}" --yes

step "11. dynops dr status after the drill: pointer back on eu-west-1, no fence"
dynops dr status "${DR_FLAGS[@]}"
