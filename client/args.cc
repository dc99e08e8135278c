#include "client/args.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace paraplan::cli {

namespace {

// One command (or "command subcommand"): the flags it takes and its positional words.
struct CommandSpec {
  std::string name;                  // "plan", "profiles show"
  int min_words = 0, max_words = 0;  // positional words after the name
  std::set<std::string> options;     // --key VALUE
  std::set<std::string> flags;       // --key
  std::string usage;
};

const std::vector<CommandSpec>& Commands() {
  static const auto* kCommands = new std::vector<CommandSpec>{
      {"profiles list", 0, 0, {}, {}, "paraplan profiles list\n  The newest version of every system profile.\n"},
      {"profiles show", 1, 1, {}, {},
       "paraplan profiles show NAME[@VERSION]\n  One profile (the newest version unless @VERSION is given).\n"},
      {"profiles history", 1, 1, {}, {}, "paraplan profiles history NAME\n  Every version of a profile, oldest first.\n"},
      {"profiles put", 1, 1, {}, {},
       "paraplan profiles put FILE.json\n"
       "  Creates the SystemProfile in FILE.json, or writes its next version when NAME exists;\n"
       "  prints NAME@VERSION.\n"},
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
      {"profiles fit-gemm", 2, 2, {}, {"dry-run"},
       "paraplan profiles fit-gemm NAME[@V] FILE.csv [--dry-run]\n"
       "  Fits matmul_efficiency (16-bit and FP8) and the small-GEMM tail to a GEMM sweep\n"
       "  (m,n,k,dtype,seconds: scripts/microbench/gemm_sweep.py) and writes the next version.\n"},
      {"estimate", 0, 0, {"profile", "workload", "model", "config", "gpus", "batch"}, {},
       "paraplan estimate --profile NAME (--workload FILE | --model PRESET) --config FILE [--gpus N]\n"
       "  Predicts one configuration (ParallelConfig JSON in FILE): iteration time and its\n"
       "  breakdown, memory per GPU, throughput, MFU, energy, cost. --gpus N checks that the\n"
       "  degrees multiply to N.\n"
       "paraplan estimate --batch FILE.jsonl\n"
       "  One EstimateRequest JSON per line ({\"profile\", \"workload\" or \"model\", \"config\"});\n"
       "  prints one JSON line per request, in order: the Estimate, or {\"error\": {\"code\", \"message\"}}.\n"},
      {"plan",
       0,
       0,
       {"profile", "workload", "model", "gpus", "global-batch", "top", "objective", "tp", "pp", "dp", "cp", "ep",
        "mbs", "vpp", "zero", "recompute", "schedule", "max-tp", "max-pp", "max-cp", "max-mbs", "headroom", "sp",
        "flash", "overlap-grad-reduce", "emit", "report"},
       {"allow-offload", "cuda-graphs", "tp-comm-overlap"},
       "paraplan plan --profile NAME (--workload FILE | --model PRESET) --gpus N[,N...] --global-batch B\n"
       "     [--top K] [--objective time|cost|energy]\n"
       "  Searches every way to split the training and ranks what fits. Constraints (lists\n"
       "  allow only the values given; max 0 = no cap):\n"
       "     --tp N,..  --pp N,..  --dp N,..  --cp N,..  --ep N,..  --mbs N,..  --vpp N,..\n"
       "     --zero N,..  --recompute none,selective,full\n"
       "     --schedule 1f1b,gpipe,interleaved,zero-bubble\n"
       "     --max-tp N  --max-pp N  --max-cp N  --max-mbs N\n"
       "     --sp on|off  --flash on|off  --overlap-grad-reduce on|off\n"
       "     --headroom F (share of GPU memory to keep free)  --allow-offload\n"
       "  The framework the job runs in (every plan uses them): --cuda-graphs (kernels\n"
       "  replayed from CUDA graphs: no host launch cost)  --tp-comm-overlap (TP collectives\n"
       "  overlapped with GEMMs, Transformer Engine userbuffers)\n"
       "  --emit megatron|nemo|deepspeed|torchtitan  prints, instead of the table, the launcher\n"
       "     arguments of the best plan for that framework (exit 1 when no plan fits)\n"
       "  --report FILE.html  also writes a self-contained HTML report: ranked table, time and\n"
       "     memory breakdowns, Pareto front, profile version and its measured accuracy\n"},
      {"ingest", 1, 1, {}, {},
       "paraplan ingest FILE.jsonl\n"
       "  One Measurement JSON per line; prints accepted / duplicate / rejected per line and totals.\n"},
      {"calibrate", 0, 0, {"profile"}, {"dry-run"},
       "paraplan calibrate --profile NAME [--dry-run]\n"
       "  Fits the profile's default version to all its measurements (parameters chosen by\n"
       "  sensitivity, grouped cross-validation) and stores the next version. It becomes the\n"
       "  default only if its cross-validated error beats the current version's by 2 %;\n"
       "  otherwise it is kept as a candidate (see profiles promote). --dry-run stores nothing.\n"},
      {"accuracy", 0, 0, {"profile", "label", "recent"}, {},
       "paraplan accuracy --profile NAME [--label KEY] [--recent N]\n"
       "  Measured-vs-predicted error: overall, over the most recent N, and per value of label KEY.\n"},
      {"models", 0, 0, {}, {}, "paraplan models\n  The built-in model presets (for --model).\n"},
      {"health", 0, 1, {}, {}, "paraplan health [SERVICE]\n  grpc.health.v1 status of the server (exit 69 unless SERVING).\n"},
  };
  return *kCommands;
}

constexpr char kGlobal[] =
    "global flags: --server HOST:PORT (default $PARAPLAN_SERVER, else 127.0.0.1:50051)\n"
    "              --output table|json (default table)  --timeout SECONDS (default 30)\n"
    "              --token TOKEN (default $PARAPLAN_TOKEN)  --tls-ca PEM (TLS, trusting this CA)\n"
    "              --tls-cert PEM --tls-key PEM (client certificate for mutual TLS)\n"
    "exit codes: 0 ok, 1 RPC error (or nothing to --emit), 2 usage, 65 bad input file,\n"
    "            69 server unavailable, 73 the --report file cannot be written\n";

// Flags that take no value, whatever the command.
bool IsBoolean(const std::string& key) {
  return key == "help" || key == "allow-offload" || key == "cuda-graphs" || key == "tp-comm-overlap" ||
         key == "dry-run";
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

// Usage of every spec whose name starts with `prefix` ("" = all).
std::string UsageOf(const std::string& prefix) {
  std::string out = "usage:\n";
  for (const CommandSpec& c : Commands()) {
    if (prefix.empty() || c.name == prefix || c.name.rfind(prefix + " ", 0) == 0) absl::StrAppend(&out, c.usage);
  }
  return absl::StrCat(out, "\n", kGlobal);
}

std::string Plural(int n, const char* word) {
  return absl::StrCat(n == 0 ? std::string("no") : absl::StrCat(n), " ", word, n == 1 ? "" : "s");
}

}  // namespace

std::string Usage() {
  std::string out = "usage: paraplan [--server HOST:PORT] [--output table|json] [--timeout S] COMMAND ...\n\n";
  for (const CommandSpec& c : Commands()) absl::StrAppend(&out, c.usage);
  return absl::StrCat(out, "\n", kGlobal, "`paraplan COMMAND --help` shows one command.\n");
}

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
  if (const char* env = std::getenv("PARAPLAN_SERVER"); env != nullptr && *env != '\0') a.server = env;
  if (const char* env = std::getenv("PARAPLAN_TOKEN"); env != nullptr && *env != '\0') a.token = env;
  std::vector<std::string> given;  // command flags, in order, checked once the command is known
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    if (w == "-h") w = "--help";
    if (w.rfind("--", 0) != 0 || w.size() == 2) {
      if (w.size() > 1 && w[0] == '-' && w != "--") {
        return absl::InvalidArgumentError(absl::StrCat("unknown flag ", w, "\n\n", Usage()));
      }
      a.words.push_back(w);
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
      if (inline_value) return absl::InvalidArgumentError(absl::StrCat("--", key, " takes no value\n\n", Usage()));
      if (key == "help") {
        a.help = true;
      } else {
        a.flags.insert(key);
        given.push_back(key);
      }
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("--", key, " needs a value\n\n", Usage()));
      value = argv[++i];
    }
    if (key == "server") {
      if (value.empty()) return absl::InvalidArgumentError(absl::StrCat("--server needs HOST:PORT\n\n", Usage()));
      a.server = value;
    } else if (key == "output") {
      if (value != "table" && value != "json") {
        return absl::InvalidArgumentError(
            absl::StrCat("--output must be table or json, not \"", value, "\"\n\n", Usage()));
      }
      a.output = value;
    } else if (key == "token") {
      a.token = value;
    } else if (key == "tls-ca") {
      a.tls_ca = value;
    } else if (key == "tls-cert") {
      a.tls_cert = value;
    } else if (key == "tls-key") {
      a.tls_key = value;
    } else if (key == "timeout") {
      if (!absl::SimpleAtod(value, &a.timeout_s) || !(a.timeout_s > 0) || a.timeout_s > 1e6) {
        return absl::InvalidArgumentError(absl::StrCat("--timeout must be a positive number of seconds\n\n", Usage()));
      }
    } else {
      if (a.options.count(key)) {
        return absl::InvalidArgumentError(absl::StrCat("--", key, " given twice\n\n", Usage()));
      }
      a.options[key] = value;
      given.push_back(key);
    }
  }

  a.usage = Usage();
  if (a.words.empty()) {
    if (a.help) return a;
    return absl::InvalidArgumentError(absl::StrCat("no command given\n\n", Usage()));
  }
  const CommandSpec* spec = Find(a.words);
  if (spec == nullptr) {
    // A known command with an unknown or missing subcommand ("profiles", "profiles frob").
    if (HasSubcommands(a.words[0])) {
      const std::string family = UsageOf(a.words[0]);
      a.usage = family;
      if (a.help && a.words.size() == 1) return a;
      return absl::InvalidArgumentError(
          a.words.size() == 1 ? absl::StrCat(a.words[0], " needs a subcommand\n\n", family)
                              : absl::StrCat("unknown subcommand \"", a.words[1], "\"\n\n", family));
    }
    return absl::InvalidArgumentError(absl::StrCat("unknown command \"", a.words[0], "\"\n\n", Usage()));
  }
  a.usage = UsageOf(spec->name);
  if (a.help) return a;
  const int name_words = spec->name.find(' ') == std::string::npos ? 1 : 2;
  const int positional = static_cast<int>(a.words.size()) - name_words;
  if (positional < spec->min_words || positional > spec->max_words) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec->name, " takes ",
        spec->min_words == spec->max_words ? Plural(spec->min_words, "argument")
                                           : absl::StrCat(spec->min_words, " to ", Plural(spec->max_words, "argument")),
        ", not ", positional, "\n\n", a.usage));
  }
  for (const std::string& key : given) {
    const bool known = a.flags.count(key) ? spec->flags.count(key) > 0 : spec->options.count(key) > 0;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", key, " for `", spec->name, "`",
                                                     spec->options.empty() && spec->flags.empty() ? " (it takes none)" : "",
                                                     "\n\n", a.usage));
    }
  }
  return a;
}

}  // namespace paraplan::cli
