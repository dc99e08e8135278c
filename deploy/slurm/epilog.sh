#!/usr/bin/env bash
# paraplan Slurm epilog: posts a finished job's measured iteration time to paraplan as a
# measurement, so that prediction accuracy is tracked and calibration learns from it.
#
# Contract.
#   The training script prints, once per step it times (any other text around it):
#       PARAPLAN_ITERATION_TIME_S=0.512 step=100
#   and optionally its peak memory per GPU:
#       PARAPLAN_PEAK_MEMORY_GIB=61.3
#   The epilog takes the median of the iteration times (steps below PARAPLAN_SKIP_STEPS
#   left out) and the largest peak memory, and POSTs one measurement to
#   /v1/measurements:ingest: id "slurm-[CLUSTER-]JOBID" (idempotent: a second post of the
#   same job is a duplicate), the plan's model (a preset, `model`), profile and
#   configuration, labels source=slurm, slurm_job_id, samples and, when known,
#   slurm_partition.
#
#   Where the plan comes from, first found:
#     1. PARAPLAN_PLAN: the attachment job_submit.lua wrote ("paraplan={...}", alone or
#        inside a longer admin comment);
#     2. the job's environment as job_submit.lua set it (PARAPLAN_MODEL, PARAPLAN_PROFILE
#        and PARAPLAN_CONFIG_JSON, or PARAPLAN_TP/PP/DP/CP/EP/VPP/MBS/GBS/SP/ZERO/
#        RECOMPUTE: the degrees only, other fields at their defaults, so the prediction
#        may differ from the plan's): when this script runs inside the job (the end of
#        the batch script, or TaskEpilog);
#     3. `scontrol show job -o $SLURM_JOB_ID`: its AdminComment (as EpilogSlurmctld or
#        Epilog, which run as root without the job's environment).
#   The job's output: PARAPLAN_JOB_OUTPUT, else SLURM_JOB_STDOUT, else scontrol's StdOut
#   (%j / %J / %A / %x / %u expanded).
#
#   JSON is read and written with jq (Debian: jq): the plan in any member order, the
#   request body with every value escaped by jq. Without jq nothing is posted (logged).
#
#   Fails open: it always exits 0 (a failing Epilog would drain the node); a job without
#   a plan or without timing lines is skipped; every outcome is one line on stderr and,
#   where `logger` exists, in syslog (tag paraplan-epilog).
#
# Settings (environment): PARAPLAN_URL (default http://127.0.0.1:8080),
# PARAPLAN_TOKEN_FILE (a writer token), PARAPLAN_TIMEOUT_S (default 5),
# PARAPLAN_SKIP_STEPS (default 0), PARAPLAN_MIN_SAMPLES (default 1), PARAPLAN_CURL,
# PARAPLAN_JQ (default jq).
set -u

URL=${PARAPLAN_URL:-http://127.0.0.1:8080}
TIMEOUT_S=${PARAPLAN_TIMEOUT_S:-5}
SKIP_STEPS=${PARAPLAN_SKIP_STEPS:-0}
MIN_SAMPLES=${PARAPLAN_MIN_SAMPLES:-1}
CURL=${PARAPLAN_CURL:-curl}
JQ=${PARAPLAN_JQ:-jq}

log() {
  echo "paraplan-epilog: job ${SLURM_JOB_ID:-?}: $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t paraplan-epilog "job ${SLURM_JOB_ID:-?}: $*" 2>/dev/null
  return 0
}

# Names and numbers as presets, profiles, partitions and job ids are spelled (jq escapes
# what goes into JSON; these keep odd values out of ids and log lines).
is_name() { [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9._@-]{0,79}$ ]]; }
is_uint() { [[ $1 =~ ^[0-9]{1,9}$ ]]; }

# The value of KEY=VALUE in scontrol's one-line output (values without spaces).
job_field() { grep -oE "(^| )$1=[^ ]*" <<<"$2" | head -n 1 | sed -E "s/^ ?$1=//"; }

# "paraplan={...}" in $1 -> {...} (the first; the attachment has no spaces).
plan_from_comment() { grep -oE 'paraplan=\{[^ ]*\}' <<<"$1" | head -n 1 | sed -E 's/^paraplan=//'; }

# The text of scontrol's one-line output from its AdminComment on (which may hold
# spaces, so it has no clean end). Users cannot set AdminComment, but their Comment can
# imitate it; that buys nothing beyond what the job's own output already decides (the
# timings), and the robust calibration fit bounds what one outlier can do.
from_admin_comment() { [[ $1 == *AdminComment=* ]] && echo "${1#*AdminComment=}"; }

# A plan ({"model":..,"profile":..,"config":{...}}) from the PARAPLAN_* variables.
plan_from_environment() {
  local model=${PARAPLAN_MODEL:-} profile=${PARAPLAN_PROFILE:-}
  [[ -n $model && -n $profile ]] || { log "skipped: PARAPLAN_MODEL without PARAPLAN_PROFILE"; return 1; }
  local config=${PARAPLAN_CONFIG_JSON:-}
  if [[ -z $config ]]; then
    local fields=() pair var value
    for pair in data_parallel:DP tensor_parallel:TP pipeline_parallel:PP context_parallel:CP \
                expert_parallel:EP virtual_pipeline_stages:VPP micro_batch_size:MBS global_batch_size:GBS zero_stage:ZERO; do
      var=PARAPLAN_${pair##*:}
      value=${!var:-}
      [[ -z $value ]] && continue
      is_uint "$value" || { log "skipped: $var=\"$value\" is not an integer"; return 2; }
      fields+=(--argjson "${pair%%:*}" "$((10#$value))")
    done
    case ${PARAPLAN_SP:-0} in 1|true) fields+=(--argjson sequence_parallel true) ;; esac
    case ${PARAPLAN_RECOMPUTE:-} in
      "") ;;
      none|selective|full) fields+=(--arg recompute "RECOMPUTE_$(tr a-z A-Z <<<"$PARAPLAN_RECOMPUTE")") ;;
      *) log "skipped: PARAPLAN_RECOMPUTE=\"$PARAPLAN_RECOMPUTE\" is not none, selective or full"; return 2 ;;
    esac
    config=$("$JQ" -cn "${fields[@]}" '$ARGS.named')
  fi
  "$JQ" -cn --arg model "$model" --arg profile "$profile" --argjson config "$config" \
    '{model: $model, profile: $profile, config: $config}' 2>/dev/null ||
    { log "skipped: PARAPLAN_CONFIG_JSON is not JSON: ${config:0:200}"; return 2; }
}

# jq FILTER over the JSON text $1, quietly: nothing when it is not JSON.
json_get() { "$JQ" -cr "$2" <<<"$1" 2>/dev/null; }

main() {
  local job=${SLURM_JOB_ID:-}
  if ! is_uint "$job"; then
    log "skipped: SLURM_JOB_ID is not set"
    return 0
  fi
  if ! command -v "$JQ" >/dev/null 2>&1; then
    log "failed: $JQ not found (apt-get install jq); nothing posted"
    return 0
  fi

  local info="" plan="" output=${PARAPLAN_JOB_OUTPUT:-${SLURM_JOB_STDOUT:-}}
  if [[ -n ${PARAPLAN_PLAN:-} ]]; then
    plan=$(plan_from_comment "$PARAPLAN_PLAN")
  elif [[ -n ${PARAPLAN_MODEL:-} ]]; then
    plan=$(plan_from_environment) || return 0
  fi
  if [[ -z $plan || -z $output ]] && command -v scontrol >/dev/null 2>&1; then
    info=$(scontrol show job -o "$job" 2>/dev/null | head -n 1)
    [[ -z $plan ]] && plan=$(plan_from_comment "$(from_admin_comment "$info")")
    if [[ -z $output ]]; then
      output=$(job_field StdOut "$info")
      local name user
      name=$(job_field JobName "$info")
      user=$(job_field UserId "$info")
      output=${output//%j/$job}
      output=${output//%J/$job}
      output=${output//%A/$job}
      output=${output//%x/$name}
      output=${output//%u/${user%%(*}}
    fi
  fi
  if [[ -z $plan ]]; then
    log "skipped: no paraplan plan (not submitted with a paraplan: comment)"
    return 0
  fi

  local model profile config
  model=$(json_get "$plan" '.model | strings')
  profile=$(json_get "$plan" '.profile | strings')
  config=$(json_get "$plan" '.config | objects')
  if ! is_name "$model" || ! is_name "$profile" || [[ -z $config || $config == *$'\n'* ]]; then
    log "skipped: the plan does not name a model, a profile and a config: $plan"
    return 0
  fi
  if [[ -z $output || ! -r $output ]]; then
    log "skipped: job output \"$output\" not readable"
    return 0
  fi

  # Median iteration time of the timed steps, and the largest peak memory.
  local stats samples median peak
  stats=$(awk -v skip="$SKIP_STEPS" '
    match($0, /PARAPLAN_ITERATION_TIME_S=[0-9.eE+-]+/) {
      v = substr($0, RSTART + 26, RLENGTH - 26) + 0
      step = -1
      if (match($0, /step=[0-9]+/)) step = substr($0, RSTART + 5, RLENGTH - 5) + 0
      if (v > 0 && (step < 0 || step >= skip)) t[++n] = v
    }
    match($0, /PARAPLAN_PEAK_MEMORY_GIB=[0-9.eE+-]+/) {
      m = substr($0, RSTART + 25, RLENGTH - 25) + 0
      if (m > peak) peak = m
    }
    END {
      for (i = 2; i <= n; i++) { x = t[i]; for (j = i - 1; j >= 1 && t[j] > x; j--) t[j + 1] = t[j]; t[j + 1] = x }
      med = n == 0 ? 0 : (n % 2 ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2)
      printf "%d %.9g %.9g\n", n, med, peak
    }' "$output")
  read -r samples median peak <<<"$stats"
  if [[ ${samples:-0} -lt $MIN_SAMPLES || ${samples:-0} -eq 0 ]]; then
    log "skipped: ${samples:-0} PARAPLAN_ITERATION_TIME_S lines in $output (need $MIN_SAMPLES)"
    return 0
  fi

  local id="slurm-$job" labels=(--arg source slurm --arg slurm_job_id "$job" --arg samples "$samples")
  if [[ -n ${SLURM_CLUSTER_NAME:-} ]] && is_name "$SLURM_CLUSTER_NAME"; then
    id="slurm-$SLURM_CLUSTER_NAME-$job"
    labels+=(--arg slurm_cluster "$SLURM_CLUSTER_NAME")
  fi
  local partition=${SLURM_JOB_PARTITION:-$(job_field Partition "$info")}
  is_name "$partition" && labels+=(--arg slurm_partition "$partition")
  local body
  body=$("$JQ" -cn --arg id "$id" --arg profile "$profile" --arg model "$model" --argjson config "$config" \
           --arg time "$median" --arg peak "$peak" --arg at "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
           --argjson labels "$("$JQ" -cn "${labels[@]}" '$ARGS.named')" \
           '{measurements: [{id: $id, profile: $profile, model: $model, config: $config,
                             iteration_time_s: ($time | tonumber)}
                            + (if ($peak | tonumber) > 0 then {peak_memory_gib: ($peak | tonumber)} else {} end)
                            + {labels: $labels, observed_at: $at}]}' 2>&1)
  if [[ $? -ne 0 ]]; then
    log "failed: cannot write the measurement of $id: ${body:0:300}"
    return 0
  fi

  local tmp status response
  tmp=$(mktemp -d) || { log "failed: no temporary directory"; return 0; }
  printf 'Content-Type: application/json\r\n' >"$tmp/headers"
  if [[ -n ${PARAPLAN_TOKEN_FILE:-} ]]; then
    printf 'Authorization: Bearer %s\r\n' "$(head -n 1 "$PARAPLAN_TOKEN_FILE" 2>/dev/null | tr -d ' \r\n')" >>"$tmp/headers"
  fi
  printf '%s' "$body" >"$tmp/body"
  status=$("$CURL" -sS -X POST --max-time "$TIMEOUT_S" -H "@$tmp/headers" --data-binary "@$tmp/body" \
             -o "$tmp/response" -w '%{http_code}' "$URL/v1/measurements:ingest" 2>"$tmp/error")
  response=$(head -c 2000 "$tmp/response" 2>/dev/null)
  local error
  error=$(head -c 300 "$tmp/error" 2>/dev/null | tr '\n' ' ')
  rm -rf "$tmp"

  local summary="$id: $model on $profile, median ${median} s of $samples steps" verdict reason
  verdict=$(json_get "$response" '.results[0].status | strings')
  if [[ $status != 200 ]]; then
    log "failed: $summary: HTTP ${status:-none} from $URL ${error}${response}"
  elif [[ $verdict == STATUS_ACCEPTED ]]; then
    log "accepted: $summary, predicted $(json_get "$response" '.results[0].predicted_iteration_time_s // "?"') s"
  elif [[ $verdict == STATUS_DUPLICATE ]]; then
    log "duplicate: $summary (already stored)"
  else
    reason=$(json_get "$response" '.results[0].reason | strings')
    reason=${reason//$'\n'/ }
    log "rejected: $summary: ${reason:-$response}"
  fi
  return 0
}

main "$@"
exit 0
