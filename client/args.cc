#include "client/args.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/suggest.h"

namespace paraplan::cli {

namespace {

// One command (or "command subcommand"): the flags it takes and its positional words.
struct CommandSpec {
  std::string name;                  // "plan", "profiles show"
  int min_words = 0, max_words = 0;  // positional words after the name
  std::set<std::string> options;     // --key VALUE
  std::set<std::string> flags;       // --key
  std::string usage;
  bool tables = false;  // prints --output wide and csv
};

// The configuration flags plan, estimate and compare share (config_flags.h).
std::set<std::string> ConfigOptions(std::set<std::string> more) {
  for (const char* k : {"tp", "pp", "dp", "cp", "ep", "vpp", "mbs", "zero", "recompute", "schedule", "sp", "flash",
                        "overlap-grad-reduce", "global-batch", "dp-algorithm", "tp-algorithm", "placement"}) {
    more.insert(k);
  }
  return more;
}

// Flags of one configuration that plan searches itself (estimate, compare, simulate).
std::set<std::string> SingleConfigOptions(std::set<std::string> more) {
  more = ConfigOptions(std::move(more));
  for (const char* k : {"etp", "first-stage-layers", "last-stage-layers", "moe-dispatcher", "recompute-modules",
                        "cpu-offload-layers", "offload-modules"}) {
    more.insert(k);
  }
  return more;
}

// Switches of one configuration (estimate, compare, simulate).
std::set<std::string> SingleConfigFlags() {
  return {"cuda-graphs", "tp-comm-overlap", "no-tp-comm-overlap", "moe-a2a-overlap", "fp8-param-gather"};
}

constexpr char kConfigFlagsUsage[] =
    "     --tp N  --pp N  --dp N  --cp N  --ep N  --vpp N  --mbs N  --global-batch B  --zero 0-3\n"
    "     --recompute none|selective|full  --schedule 1f1b|gpipe|interleaved|zero-bubble\n"
    "     --sp on|off  --flash on|off  --overlap-grad-reduce on|off  --cuda-graphs\n"
    "     --tp-comm-overlap | --no-tp-comm-overlap (default: the framework's; nemo: dense models at TP > 1)\n"
    "     --dp-algorithm / --tp-algorithm auto|ring|tree|halving-doubling|hierarchical|torus-2d|\n"
    "       topo-halving-doubling  --placement packed|scattered\n"
    "     --recompute-modules core_attn,mlp,moe,moe_act,layernorm,mla_up_proj,shared_experts\n"
    "       (with --recompute selective; default core_attn)\n"
    "     MoE: --etp N (expert tensor parallelism; default --tp)  --moe-dispatcher alltoall|\n"
    "       allgather|deepep  --moe-a2a-overlap  Pipeline: --first-stage-layers N\n"
    "       --last-stage-layers N (decoder layers on the end stages; default an even split)\n"
    "     Memory: --cpu-offload-layers N (per stage, activations on the host)\n"
    "       --offload-modules attn_norm,qkv_linear,core_attn,attn_proj,mlp_norm,expert_fc1,moe_act\n"
    "       (each module's saved activations on the host between forward and backward)\n"
    "       --fp8-param-gather (FP8 weights gathered by ZeRO, no BF16 copy)\n";

// paraplan profiles SUBCOMMAND: the stored system profiles.
std::vector<CommandSpec> ProfileCommands() {
  return {
    {"profiles list", 0, 0, {}, {}, "paraplan profiles list\n  The newest version of every system profile.\n"},
    {"profiles show", 1, 1, {"set"}, {},
     "paraplan profiles show NAME[@VERSION] [--set PATH=VALUE ...]\n"
     "  One profile (the default version unless @VERSION is given); with --set, as changed\n"
     "  by the overrides (nothing is saved: `-o json` gives a file for profiles put).\n"},
    {"profiles history", 1, 1, {}, {}, "paraplan profiles history NAME\n  Every version of a profile, oldest first.\n"},
    {"profiles put", 1, 1, {}, {"new-version"},
     "paraplan profiles put FILE.json [--new-version]\n"
     "  Creates the SystemProfile in FILE.json, or writes its next version when NAME exists;\n"
     "  prints NAME@VERSION. A file named like a built-in profile (dgx-a100-80gb, ...) needs\n"
     "  --new-version: it would become the version every plan on that profile uses.\n"},
    {"profiles delete", 1, 1, {}, {}, "paraplan profiles delete NAME\n  Deletes every version of a profile.\n"},
    {"profiles promote", 1, 1, {}, {},
     "paraplan profiles promote NAME@VERSION\n"
     "  Makes that version the default of NAME: promotes a calibration kept as a\n"
     "  candidate, or rolls back to an older version.\n"},
    {"profiles fit-network", 1, 1000, {"level", "collective", "ranks"}, {"dry-run"},
     "paraplan profiles fit-network NAME[@V] FILE... [--level L] [--collective C] [--ranks N] [--dry-run]\n"
     "  Fits one network level's per-step latency, the per-call collective overhead and the\n"
     "  level's bus-bandwidth curve to nccl-tests output (the table all_reduce_perf & co.\n"
     "  print, or CSV with size(B) and time columns) and writes the next version (origin\n"
     "  microbenchmark). The collective and group size come from each file name\n"
     "  (all_reduce_8gpu.csv) or its \"#  Rank\" lines unless given.\n"},
    {"profiles put-layer-times", 2, 2, {}, {},
     "paraplan profiles put-layer-times NAME[@V] FILE.csv\n"
     "  Stores measured per-layer times (CSV: workload,layer,forward_ms,backward_ms per\n"
     "  sample) in the next version of NAME; plans and estimates of that layer-graph\n"
     "  workload then use them instead of the modelled compute of those layers.\n"},
    {"profiles fit-gemm", 2, 2, {}, {"dry-run"},
     "paraplan profiles fit-gemm NAME[@V] FILE.csv [--dry-run]\n"
     "  Fits matmul_efficiency (16-bit and FP8), the small-GEMM tail and the tiles'\n"
     "  matmul_pipeline_depth to a GEMM sweep (m,n,k,dtype,seconds:\n"
     "  scripts/microbench/gemm_sweep.py) and writes the next version.\n"},
  };
}

// estimate, compare and plan: one configuration, or the search for the best.
std::vector<CommandSpec> PlanningCommands() {
  return {
    {"estimate", 0, 0,
     SingleConfigOptions({"profile", "workload", "model", "config", "gpus", "batch", "set", "framework"}),
     SingleConfigFlags(),
     absl::StrCat(
         "paraplan estimate --profile NAME (--workload FILE | --model PRESET) (--config FILE | CONFIG FLAGS)\n"
         "     [--gpus N] [--set PATH=VALUE ...]\n"
         "  Predicts one configuration: iteration time and its breakdown, memory per GPU,\n"
         "  throughput, MFU, energy, cost. The configuration is the ParallelConfig JSON in FILE\n"
         "  or these flags (plan's constraint names, one value each; with FILE they override\n"
         "  its fields):\n",
         kConfigFlagsUsage,
         "  --gpus N checks that the degrees multiply to N. --framework NAME refuses what that\n"
         "  framework cannot run (megatron, nemo, deepspeed, torchtitan, pytorch-fsdp).\n"
         "paraplan estimate --batch FILE.jsonl\n"
         "  One EstimateRequest JSON per line ({\"profile\", \"workload\" or \"model\", \"config\"});\n"
         "  prints one JSON line per request, in order: the Estimate, or {\"error\": {\"code\", \"message\"}}.\n")},
    {"compare", 0, 0,
     SingleConfigOptions({"profile", "workload", "model", "config", "gpus", "objective", "set", "framework"}),
     SingleConfigFlags(),
     absl::StrCat(
         "paraplan compare --profile NAME (--workload FILE | --model PRESET) (--config FILE | CONFIG FLAGS)\n"
         "     [--gpus N] [--objective time|cost|energy] [--set PATH=VALUE ...]\n"
         "  Estimates the given configuration (FILE and flags as for estimate) and plans the best\n"
         "  one for the same GPU count (the product of its degrees) and global batch; prints\n"
         "  them side by side: time and its parts, memory, throughput, MFU, cost, energy, with\n"
         "  best/given ratios (exit 1 when no plan fits). JSON: {\"given\": Estimate, \"best\": Estimate}.\n"),
     true},
    {"plan",
     0,
     0,
     ConfigOptions({"profile", "workload", "model", "gpus", "top", "objective", "max-tp", "max-pp", "max-cp",
                    "max-mbs", "headroom", "emit", "report", "set", "framework"}),
     {"allow-offload", "cuda-graphs", "tp-comm-overlap", "no-tp-comm-overlap", "moe-a2a-overlap", "what-if"},
     "paraplan plan --profile NAME (--workload FILE | --model PRESET) --gpus N[,N...] --global-batch B\n"
     "     [--top K] [--objective time|time@pNN|cost|energy] [--set PATH=VALUE ...]\n"
     "  Searches every way to split the training and ranks what fits (exit 1 when nothing\n"
     "  fits). The table shows the columns in which the plans differ and lists what they\n"
     "  share; -o wide shows every column, -o csv prints them as CSV. With several GPU\n"
     "  counts it first shows the best plan of each. Constraints (lists allow only the\n"
     "  values given; max 0 = no cap):\n"
     "     --tp N,..  --pp N,..  --dp N,..  --cp N,..  --ep N,..  --mbs N,..  --vpp N,..\n"
     "     --zero N,..  --recompute none,selective,full (selective may name Megatron-Core's\n"
     "       light modules, layernorm / moe_act / mla_up_proj, where a setting needs them to fit)\n"
     "     --schedule 1f1b,gpipe,interleaved,zero-bubble\n"
     "     --max-tp N  --max-pp N  --max-cp N  --max-mbs N\n"
     "     --sp on|off  --flash on|off  --overlap-grad-reduce on|off\n"
     "     --headroom F (share of GPU memory to keep free)  --allow-offload\n"
     "  The framework the job runs in (every plan uses them): --cuda-graphs (kernels\n"
     "  replayed from CUDA graphs: no host launch cost)  --tp-comm-overlap (TP collectives\n"
     "  overlapped with GEMMs, Transformer Engine userbuffers; --no-tp-comm-overlap: never;\n"
     "  default: the framework's, under nemo on for dense models at TP > 1)  --moe-a2a-overlap (the MoE\n"
     "  all-to-all beside another micro-batch, where Megatron-Core runs it)  --dp-algorithm /\n"
     "  --tp-algorithm NAME (pin a collective algorithm; default: the cheapest per call)\n"
     "  --placement packed|scattered (where the scheduler puts the job's nodes)\n"
     "  --framework megatron|nemo|deepspeed|torchtitan|pytorch-fsdp|any  only what it runs\n"
     "  --emit megatron|megatron-bridge|nemo|deepspeed|torchtitan  prints, instead of the table,\n"
     "     the launcher arguments of the best plan that framework runs (megatron-bridge: nemo;\n"
     "     nemo: megatron; --framework overrides, any: the best of all, with notes on what the\n"
     "     launcher cannot express) (exit 1 when no plan fits)\n"
     "  --report FILE.html  also writes a self-contained HTML report: ranked table, time and\n"
     "     memory breakdowns, Pareto front, profile version and its measured accuracy\n"
     "  --what-if  with --set and one GPU count: the best plan on the stored profile (today)\n"
     "     beside the best plan with --set (what-if), as compare prints them; JSON:\n"
     "     {\"today\": Estimate, \"what_if\": Estimate or null}; --report draws the two\n",
     true},
  };
}

// ingest, calibrate and accuracy: measured runs and what they teach.
std::vector<CommandSpec> MeasurementCommands() {
  return {
    {"ingest", 1, 1, {}, {},
     "paraplan ingest FILE.jsonl\n"
     "  One Measurement JSON per line; prints accepted / duplicate / rejected per line and\n"
     "  totals (exit 1 when any line is rejected).\n"},
    {"calibrate", 0, 0, {"profile", "operation"}, {"dry-run", "no-wait"},
     "paraplan calibrate --profile NAME [--dry-run] [--no-wait]\n"
     "paraplan calibrate --operation ID\n"
     "  Fits the profile's default version to all its measurements (parameters chosen by\n"
     "  sensitivity, grouped cross-validation) and stores the next version. It becomes the\n"
     "  default only if its cross-validated error beats the current version's by 2 %;\n"
     "  otherwise it is kept as a candidate (see profiles promote). --dry-run stores nothing.\n"
     "  The calibration runs on the server as an operation: this command starts it (or\n"
     "  joins the one running for the profile), prints its phases on stderr and waits for\n"
     "  its result; --timeout bounds each call, not the wait, and an interrupted wait\n"
     "  leaves it running. --no-wait prints the operation's id and returns; --operation ID\n"
     "  shows that operation (its result once done). With no measurement since the last\n"
     "  calibration, it stores nothing and says the profile is up to date.\n"},
    {"accuracy", 0, 0, {"profile", "label", "recent"}, {},
     "paraplan accuracy --profile NAME [--label KEY] [--recent N]\n"
     "  Measured-vs-predicted error: overall, over the most recent N, and per value of label KEY.\n"},
  };
}

// models, simulate, codesign and health.
std::vector<CommandSpec> OtherCommands() {
  return {
    {"models", 0, 0, {}, {}, "paraplan models\n  The built-in model presets (for --model).\n"},
    {"simulate", 0, 0, SingleConfigOptions({"profile", "workload", "model", "config", "gpus", "background", "set"}),
     SingleConfigFlags(),
     absl::StrCat(
         "paraplan simulate --profile NAME (--workload FILE | --model PRESET) (--config FILE | CONFIG FLAGS)\n"
         "     [--background LOAD] [--set PATH=VALUE ...]\n"
         "  Replays the configuration's collectives (every group of each dimension at once) as\n"
         "  flows on a SimGrid model of the profile's network and prints, per collective, the\n"
         "  analytic time beside the simulated one (alone, and the overlapped DP reduction\n"
         "  beside the costliest blocking collective), and the iteration time both ways.\n"
         "  --background LOAD  share (0-1) of the GPUs outside the job that stream across the\n"
         "     network meanwhile (other jobs). Configuration flags as for estimate:\n",
         kConfigFlagsUsage)},
    {"codesign", 0, 0, {"profiles", "model", "workloads", "gpus", "global-batch", "objective", "set"}, {},
     "paraplan codesign --profiles A,B,... (--model PRESET --global-batch B | --workloads FILE.jsonl)\n"
     "     --gpus N [--objective time|cost|energy] [--set PATH=VALUE ...]\n"
     "  For each candidate network design (a stored profile) and each workload, the best\n"
     "  plan on N GPUs; per design the weighted sums of one iteration's time, energy and cost\n"
     "  over the workloads, ranked by the objective (exit 1 when no design fits them all).\n"
     "  FILE.jsonl: one workload a line, {\"model\": \"llama3-8b\" | \"workload\": {...},\n"
     "  \"weight\": 2, \"global_batch_size\": 512, \"name\": \"...\"} (weight = iterations in the mix).\n"
     "  --set changes every design alike for this request (a what-if), as for estimate.\n"
     "  -o wide adds the whole configuration, samples/s, MFU, bottleneck and time to train;\n"
     "  -o csv prints one record per design and workload with the design's totals.\n",
     true},
    {"health", 0, 1, {}, {}, "paraplan health [SERVICE]\n  grpc.health.v1 status of the server (exit 69 unless SERVING).\n"},
  };
}

// Every command, in the order of the usage text (a family's subcommands together).
const std::vector<CommandSpec>& Commands() {
  static const auto* kCommands = [] {
    auto* all = new std::vector<CommandSpec>;
    for (auto group : {ProfileCommands, PlanningCommands, MeasurementCommands, OtherCommands}) {
      for (CommandSpec& c : group()) all->push_back(std::move(c));
    }
    return all;
  }();
  return *kCommands;
}

constexpr char kGlobal[] =
    "global flags: --server HOST:PORT (default $PARAPLAN_SERVER, else 127.0.0.1:50051)\n"
    "              --output, -o table|wide|csv|json (default table; wide and csv: plan, compare,\n"
    "                codesign)\n"
    "              --timeout SECONDS (default 30)  --version (this CLI's and the server's)\n"
    "              --token TOKEN (default $PARAPLAN_TOKEN)  --tls-ca PEM (TLS, trusting this CA)\n"
    "              --tls-cert PEM --tls-key PEM (client certificate for mutual TLS)\n"
    "--set PATH=VALUE (repeatable) changes the profile for one request, never saved:\n"
    "   network.infiniband.bandwidth_gbytes_per_s=100, accelerator.memory_gib=40,\n"
    "   calibration.matmul_efficiency=0.7. profiles show prints the result; plan, estimate\n"
    "   and compare send it with the request (profile_override), and the server uses it for\n"
    "   that request only.\n"
    "FILE arguments: - reads standard input (one of them per command).\n"
    "exit codes: 0 ok\n"
    "            1 no plan fits (codesign: no design fits every workload), a measurement was\n"
    "              rejected, or the server answered an error\n"
    "            2 usage error\n"
    "            65 an input file cannot be read or parsed\n"
    "            69 server unavailable\n"
    "            73 an output file (--report) cannot be written\n";

// Flags that take no value, whatever the command.
bool IsBoolean(const std::string& key) {
  return key == "help" || key == "version" || key == "allow-offload" || key == "cuda-graphs" ||
         key == "tp-comm-overlap" || key == "no-tp-comm-overlap" || key == "moe-a2a-overlap" ||
         key == "fp8-param-gather" || key == "dry-run" ||
         key == "new-version" || key == "what-if" || key == "no-wait";
}

// The spec whose name the words start with ("profiles show" before "profiles"), or null.
const CommandSpec* Find(const std::vector<std::string>& words) {
  if (words.empty()) return nullptr;
  for (const CommandSpec& c : Commands()) {
    if (c.name == words[0] || (words.size() > 1 && c.name == absl::StrCat(words[0], " ", words[1]))) return &c;
  }
  return nullptr;
}

// Whether `word` names a family of subcommands ("profiles").
bool HasSubcommands(const std::string& word) {
  for (const CommandSpec& c : Commands()) {
    if (c.name.rfind(word + " ", 0) == 0) return true;
  }
  return false;
}

// The first words of every command ("profiles", "plan", ...), and the subcommands of a family.
std::vector<std::string> CommandWords() {
  std::vector<std::string> out;
  for (const CommandSpec& c : Commands()) {
    const std::string first = c.name.substr(0, c.name.find(' '));
    if (out.empty() || out.back() != first) out.push_back(first);
  }
  return out;
}
std::vector<std::string> Subcommands(const std::string& family) {
  std::vector<std::string> out;
  for (const CommandSpec& c : Commands()) {
    if (c.name.rfind(family + " ", 0) == 0) out.push_back(c.name.substr(family.size() + 1));
  }
  return out;
}

// Usage of every spec whose name starts with `prefix` ("" = all).
std::string UsageOf(const std::string& prefix) {
  std::string out = "usage:\n";
  for (const CommandSpec& c : Commands()) {
    if (prefix.empty() || c.name == prefix || c.name.rfind(prefix + " ", 0) == 0) absl::StrAppend(&out, c.usage);
  }
  return absl::StrCat(out, "\n", kGlobal);
}

// The synopsis of the specs named `prefix` (each "paraplan ..." line and the lines
// continuing it), and where to read the rest.
std::string ShortUsageOf(const std::string& prefix) {
  std::string out;
  for (const CommandSpec& c : Commands()) {
    if (c.name != prefix && c.name.rfind(prefix + " ", 0) != 0) continue;
    bool in_synopsis = false;
    for (absl::string_view line : absl::StrSplit(c.usage, '\n', absl::SkipEmpty())) {
      if (line.rfind("paraplan ", 0) == 0) {
        in_synopsis = true;
      } else if (line.rfind("     ", 0) != 0) {
        in_synopsis = false;
      }
      if (in_synopsis) absl::StrAppend(&out, out.empty() ? "usage: " : "       ", line, "\n");
    }
  }
  return absl::StrCat(out, "run `paraplan ", prefix, " --help` for every flag and `paraplan --help` for exit codes\n");
}

constexpr char kShortGlobal[] =
    "usage: paraplan [--server HOST:PORT] [-o table|wide|csv|json] [--timeout S] COMMAND ...\n"
    "run `paraplan --help` for the commands, their flags and the exit codes\n";

std::string Plural(int n, const char* word) {
  return absl::StrCat(n == 0 ? std::string("no") : absl::StrCat(n), " ", word, n == 1 ? "" : "s");
}

absl::Status UsageError(const std::string& what, const std::string& short_usage) {
  return absl::InvalidArgumentError(absl::StrCat(what, "\n", short_usage));
}

// Takes the value of --`key`: a global flag's into its field, a command option's into
// `options` (and `given`, to be checked once the command is known).
absl::Status SetValue(const std::string& key, const std::string& value, Args* a, std::vector<std::string>* given) {
  if (key == "server") {
    if (value.empty()) return UsageError("--server needs HOST:PORT", kShortGlobal);
    a->server = value;
  } else if (key == "output") {
    if (value != "table" && value != "wide" && value != "csv" && value != "json") {
      return UsageError(absl::StrCat("--output must be table, wide, csv or json, not \"", value, "\"",
                                     DidYouMean(value, {"table", "wide", "csv", "json"})),
                        kShortGlobal);
    }
    a->output = value;
  } else if (key == "token") {
    a->token = value;
  } else if (key == "tls-ca") {
    a->tls_ca = value;
  } else if (key == "tls-cert") {
    a->tls_cert = value;
  } else if (key == "tls-key") {
    a->tls_key = value;
  } else if (key == "timeout") {
    if (!absl::SimpleAtod(value, &a->timeout_s) || !(a->timeout_s > 0) || a->timeout_s > 1e6) {
      return UsageError("--timeout must be a positive number of seconds", kShortGlobal);
    }
  } else if (key == "set") {
    a->sets.push_back(value);
    given->push_back(key);
  } else {
    if (a->options.count(key)) return UsageError(absl::StrCat("--", key, " given twice"), kShortGlobal);
    a->options[key] = value;
    given->push_back(key);
  }
  return absl::OkStatus();
}

// Reads the command line into `a`: words, global flags and the command's options and
// boolean flags (those also in `given`, in order).
absl::Status ReadFlags(int argc, char** argv, Args* a, std::vector<std::string>* given) {
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    if (w == "-h") w = "--help";
    if (w == "-o") w = "--output";
    if (w.rfind("--", 0) != 0 || w.size() == 2) {
      // "-" alone is a file name (standard input).
      if (w.size() > 1 && w[0] == '-' && w != "--") {
        return UsageError(absl::StrCat("unknown flag ", w, DidYouMean(w, {"-o", "-h"})), kShortGlobal);
      }
      a->words.push_back(w);
      continue;
    }
    std::string key = w.substr(2), value;
    const size_t eq = key.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    if (IsBoolean(key)) {
      if (inline_value) return UsageError(absl::StrCat("--", key, " takes no value"), kShortGlobal);
      if (key == "help") {
        a->help = true;
      } else if (key == "version") {
        a->version = true;
      } else {
        a->flags.insert(key);
        given->push_back(key);
      }
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) return UsageError(absl::StrCat("--", key, " needs a value"), kShortGlobal);
      value = argv[++i];
    }
    if (absl::Status s = SetValue(key, value, a, given); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Checks the command line against the command's spec: its positional words, that it
// takes every flag `given`, and that it prints the --output asked for (wide falls back to
// table).
absl::Status CheckAgainstSpec(const CommandSpec& spec, const std::vector<std::string>& given, Args* a) {
  const int name_words = spec.name.find(' ') == std::string::npos ? 1 : 2;
  const int positional = static_cast<int>(a->words.size()) - name_words;
  if (positional < spec.min_words || positional > spec.max_words) {
    return UsageError(
        absl::StrCat(spec.name, " takes ",
                     spec.min_words == spec.max_words
                         ? Plural(spec.min_words, "argument")
                         : absl::StrCat(spec.min_words, " to ", Plural(spec.max_words, "argument")),
                     ", not ", positional),
        a->short_usage);
  }
  for (const std::string& key : given) {
    const bool known = a->flags.count(key) ? spec.flags.count(key) > 0 : spec.options.count(key) > 0;
    if (!known) {
      std::vector<std::string> all(spec.options.begin(), spec.options.end());
      all.insert(all.end(), spec.flags.begin(), spec.flags.end());
      return UsageError(absl::StrCat("unknown flag --", key, " for `", spec.name, "`",
                                     all.empty() ? " (it takes none)" : DidYouMean(key, all, "--")),
                        a->short_usage);
    }
  }
  if ((a->output == "csv" || a->output == "wide") && !spec.tables) {
    if (a->output == "csv") {
      return UsageError(absl::StrCat("--output csv: only plan, compare and codesign print CSV, not `", spec.name, "`"),
                        a->short_usage);
    }
    a->output = "table";  // wide: every table this command prints is already whole
  }
  return absl::OkStatus();
}

}  // namespace

std::string Usage() {
  std::string out =
      "usage: paraplan [--server HOST:PORT] [--output, -o table|wide|csv|json] [--timeout S] COMMAND ...\n\n";
  for (const CommandSpec& c : Commands()) absl::StrAppend(&out, c.usage);
  return absl::StrCat(out, "\n", kGlobal, "`paraplan COMMAND --help` shows one command.\n");
}

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
  if (const char* env = std::getenv("PARAPLAN_SERVER"); env != nullptr && *env != '\0') a.server = env;
  if (const char* env = std::getenv("PARAPLAN_TOKEN"); env != nullptr && *env != '\0') a.token = env;
  a.usage = Usage();
  a.short_usage = kShortGlobal;
  std::vector<std::string> given;  // command flags, in order, checked once the command is known
  if (absl::Status s = ReadFlags(argc, argv, &a, &given); !s.ok()) return s;

  if (a.version) return a;
  if (a.words.empty()) {
    if (a.help) return a;
    return UsageError("no command given", kShortGlobal);
  }
  const CommandSpec* spec = Find(a.words);
  if (spec == nullptr) {
    // A known command with an unknown or missing subcommand ("profiles", "profiles frob").
    if (HasSubcommands(a.words[0])) {
      a.usage = UsageOf(a.words[0]);
      a.short_usage = ShortUsageOf(a.words[0]);
      if (a.help && a.words.size() == 1) return a;
      return UsageError(a.words.size() == 1 ? absl::StrCat(a.words[0], " needs a subcommand")
                                            : absl::StrCat("unknown subcommand \"", a.words[1], "\"",
                                                           DidYouMean(a.words[1], Subcommands(a.words[0]))),
                        a.short_usage);
    }
    return UsageError(
        absl::StrCat("unknown command \"", a.words[0], "\"", DidYouMean(a.words[0], CommandWords())),
        kShortGlobal);
  }
  a.usage = UsageOf(spec->name);
  a.short_usage = ShortUsageOf(spec->name);
  if (a.help) return a;
  if (absl::Status s = CheckAgainstSpec(*spec, given, &a); !s.ok()) return s;
  return a;
}

}  // namespace paraplan::cli
