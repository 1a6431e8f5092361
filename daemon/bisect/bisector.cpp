// The bisect's search over probes.
#include "daemon/bisect/bisector.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/pool/request_batch.h"
#include "daemon/verdict/verdict_of_outcome.h"
#include "protocol/bisect_messages.h"

namespace minifyd::bisect {
namespace {

using Clock = std::chrono::steady_clock;

// CompilerBisector's order of the stages the Python worker serves, for when no probe told the
// worker's own (a torch without CompilerBisector, or probes that all crashed).
const std::vector<std::string> known_stage_order = {"aot_eager", "aot_eager_decomp_partition", "inductor"};
constexpr const char* compiler_bisector_source = "CompilerBisector";
constexpr const char* inductor_entry_option = "minifyd.inductor_entry";

struct Probe {
  std::string stage;
  std::optional<protocol::BisectSubsystem> subsystem;  // none: the stage alone
  std::optional<std::uint64_t> enabled;                // for a subsystem of kind applications
};

struct ProbeAnswer {
  ProbeRecord record;
  std::optional<protocol::BisectObservation> observation;
};

bool fails(const ProbeAnswer& answer) { return answer.record.outcome == outcome_fails; }

class Bisection {
 public:
  Bisection(const pool::PoolAccess& access, const verdict::EvaluationSpec& spec, const GraphDocument& document,
            const std::filesystem::path& store, verdict::FailureJudge& judge)
      : access_(access), spec_(spec), document_(document), store_(store), judge_(judge) {}

  Expected<BisectResult> run();

 private:
  // Evaluates every probe at once and answers them in the same order; the verdict of probe
  // `reference` (the graph as the run compiles it) sets the judge's signature if it has none.
  Expected<std::vector<ProbeAnswer>> round(const std::vector<Probe>& probes,
                                           std::optional<std::size_t> reference = std::nullopt);
  ProbeRecord judged(const Probe& probe, const protocol::Verdict& verdict, double seconds);
  void learn(const ProbeAnswer& answer);
  std::vector<std::string> stages_up_to_backend() const;
  Expected<void> bisect_applications(const std::string& stage, const protocol::BisectSubsystem& subsystem,
                                     std::uint64_t applications);
  void name_target();

  const pool::PoolAccess& access_;
  const verdict::EvaluationSpec& spec_;
  const GraphDocument& document_;
  std::filesystem::path store_;
  verdict::FailureJudge& judge_;
  std::optional<protocol::BisectPlan> plan_;
  // Debug info of each application, by subsystem, from the probes that counted them.
  std::map<std::string, std::vector<std::string>> debug_info_;
  BisectResult result_;
};

Expected<std::vector<ProbeAnswer>> Bisection::round(const std::vector<Probe>& probes, std::optional<std::size_t> reference) {
  struct Answered {
    Expected<protocol::Verdict> verdict;
    std::optional<protocol::BisectObservation> observation;
    double seconds = 0;
  };
  std::vector<std::optional<Answered>> answers(probes.size());
  pool::RequestBatch batch(access_);
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const Probe& probe = probes[i];
    verdict::EvaluationSpec spec = spec_;
    spec.backend = probe.stage;
    protocol::BisectProbe wire;
    if (probe.subsystem) {
      for (const auto& [key, value] : probe.subsystem->options) spec.backend_options[key] = value;
      if (probe.subsystem->kind == protocol::bisect_kind_applications) {
        wire.subsystem = probe.subsystem->name;
        wire.enabled = probe.enabled;
      }
    }
    protocol::EvaluateRequest request = verdict::evaluate_request(spec, document_, store_);
    request.bisect = wire;
    Clock::time_point submitted = Clock::now();
    batch.submit(std::move(request), spec.timeout, [&answers, i, submitted](pool::WorkerOutcome outcome) {
      Answered answered{verdict::verdict_of(outcome), std::nullopt,
                        std::chrono::duration<double>(Clock::now() - submitted).count()};
      if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome))
        if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply)) answered.observation = evaluated->bisect;
      answers[i] = std::move(answered);
    });
  }
  batch.wait();
  for (std::size_t i = 0; i < probes.size(); ++i) {
    if (!answers[i]) return make_error(ErrorKind::io, "bisect: the worker pool stopped");
    if (!answers[i]->verdict) return answers[i]->verdict.error().with_context("bisect probe of " + probes[i].stage);
  }
  // A bisect of a graph alone (`minify bisect`) takes the failure to look for from the graph's own verdict.
  if (reference && judge_.awaits_signature() && !answers[*reference]->verdict->pass)
    judge_.expect(verdict::signature_of(*answers[*reference]->verdict));
  std::vector<ProbeAnswer> done;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    ProbeAnswer answer{judged(probes[i], *answers[i]->verdict, answers[i]->seconds), std::move(answers[i]->observation)};
    learn(answer);
    result_.probes.push_back(answer.record);
    done.push_back(std::move(answer));
  }
  return done;
}

ProbeRecord Bisection::judged(const Probe& probe, const protocol::Verdict& verdict, double seconds) {
  ProbeRecord record;
  record.stage = probe.stage;
  if (probe.subsystem) record.subsystem = probe.subsystem->name;
  record.enabled = probe.enabled;
  record.seconds = seconds;
  if (verdict.pass) {
    record.outcome = outcome_passes;
  } else if (judge_.counts(verdict)) {
    record.outcome = outcome_fails;
  } else {
    record.outcome = outcome_other;
    record.detail = describe(verdict::signature_of(verdict));
  }
  return record;
}

void Bisection::learn(const ProbeAnswer& answer) {
  if (!answer.observation) return;
  if (!plan_) plan_ = answer.observation->plan;  // the stages' probes bring it
  if (answer.record.subsystem.empty()) return;
  auto& known = debug_info_[answer.record.subsystem];
  if (answer.observation->debug_info.size() > known.size()) known = answer.observation->debug_info;
}

std::vector<std::string> Bisection::stages_up_to_backend() const {
  const std::vector<std::string>& order = plan_ && !plan_->stages.empty() ? plan_->stages : known_stage_order;
  std::vector<std::string> stages;
  for (const std::string& stage : order) {
    if (stage == spec_.backend) break;
    stages.push_back(stage);
  }
  stages.push_back(spec_.backend);
  return stages;
}

Expected<void> Bisection::bisect_applications(const std::string& stage, const protocol::BisectSubsystem& subsystem,
                                              std::uint64_t applications) {
  // With `passing` applications on the failure is gone, with `failing` on it shows; the guilty
  // application is the last one on at the smallest failing count.
  std::uint64_t passing = 0, failing = applications;
  std::size_t width = std::max<std::size_t>(access_.parallelism, 1);
  while (failing - passing > 1) {
    std::uint64_t gap = failing - passing;
    std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(width, gap - 1));
    std::vector<Probe> probes;
    for (std::size_t k = 1; k <= count; ++k)
      probes.push_back(Probe{stage, subsystem, passing + gap * k / (count + 1)});
    auto answers = round(probes);
    if (!answers) return answers.error();
    std::uint64_t new_failing = failing;
    for (const ProbeAnswer& answer : *answers)
      if (fails(answer)) new_failing = std::min(new_failing, *answer.record.enabled);
    std::uint64_t new_passing = passing;
    for (const ProbeAnswer& answer : *answers)
      if (!fails(answer) && *answer.record.enabled < new_failing)
        new_passing = std::max(new_passing, *answer.record.enabled);
    passing = new_passing;
    failing = new_failing;
  }
  result_.application = failing - 1;
  const auto& info = debug_info_[subsystem.name];
  if (failing - 1 < info.size()) result_.debug_info = info[failing - 1];
  return {};
}

// The lowered node's operator, when the debug info names a node of the graph (lowerings' does).
void Bisection::name_target() {
  if (result_.debug_info.empty()) return;
  if (const Node* node = document_.graph.find(result_.debug_info); node && node->op() == OpCode::call_function)
    result_.target = node->target();
}

Expected<BisectResult> Bisection::run() {
  Clock::time_point started = Clock::now();
  std::vector<Probe> stage_probes;
  for (const std::string& stage : stages_up_to_backend()) stage_probes.push_back(Probe{stage, std::nullopt, std::nullopt});
  auto stages = round(stage_probes, stage_probes.size() - 1);
  if (!stages) return stages.error();
  const ProbeAnswer& whole = stages->back();  // the graph as the run compiles it
  if (!fails(whole)) {
    std::string how = whole.record.outcome == outcome_passes ? "does not fail" : "fails otherwise (" + whole.record.detail + ")";
    return make_error(ErrorKind::invalid_input, "the graph " + how + " under " + spec_.backend + ": nothing to bisect");
  }
  auto guilty = std::find_if(stages->begin(), stages->end(), fails);
  result_.stage = guilty->record.stage;
  if (plan_) {
    if (!plan_->unsupported.empty()) result_.notes.push_back(plan_->unsupported);
    for (const std::string& stage : plan_->skipped)
      result_.notes.push_back("stage " + stage + " not probed" +
                              (stage == "eager" ? " (every verdict is judged against eager)" : " (not served by the worker)"));
  } else {
    result_.notes.push_back("no probe reported the worker's subsystems (each one's worker died): only the stage is known");
  }
  auto entry = spec_.backend_options.find(inductor_entry_option);
  if (result_.stage == "inductor" && (entry == spec_.backend_options.end() || entry->second == "compile_fx_inner"))
    result_.notes.push_back("the graph is after AOT autograd, as after_aot dumps it: Inductor's joint-graph passes and "
                            "decompositions had run before it was captured, so only its later subsystems are probed");
  std::vector<protocol::BisectSubsystem> subsystems;
  if (plan_)
    if (auto listed = plan_->subsystems.find(result_.stage); listed != plan_->subsystems.end()) subsystems = listed->second;
  // A subsystem the guilty stage's probe counted no application of cannot be what fails: not probed.
  if (guilty->observation) {
    const auto& counted = guilty->observation->applications;
    subsystems.erase(std::remove_if(subsystems.begin(), subsystems.end(),
                                    [&](const protocol::BisectSubsystem& subsystem) {
                                      return subsystem.kind == protocol::bisect_kind_applications &&
                                             counted.find(subsystem.name) == counted.end();
                                    }),
                     subsystems.end());
  }
  std::vector<Probe> switched_off;
  for (const auto& subsystem : subsystems)
    switched_off.push_back(Probe{result_.stage, subsystem,
                                 subsystem.kind == protocol::bisect_kind_applications ? std::optional<std::uint64_t>(0)
                                                                                      : std::nullopt});
  auto off = round(switched_off);
  if (!off) return off.error();
  const protocol::BisectSubsystem* culprit = nullptr;
  std::uint64_t applications = 0;
  for (std::size_t i = 0; i < subsystems.size(); ++i) {
    const ProbeAnswer& answer = (*off)[i];
    if (fails(answer)) continue;
    if (subsystems[i].kind == protocol::bisect_kind_config)
      for (const auto& [key, value] : subsystems[i].options) result_.fixed_by.push_back(key + "=" + value);
    if (culprit || subsystems[i].source != compiler_bisector_source) continue;
    culprit = &subsystems[i];
    if (answer.observation)
      if (auto count = answer.observation->applications.find(culprit->name);
          count != answer.observation->applications.end())
        applications = count->second;
  }
  if (culprit) {
    result_.subsystem = culprit->name;
    if (culprit->kind == protocol::bisect_kind_applications) {
      if (applications == 0) {
        result_.notes.push_back(culprit->name + " was never applied, yet switching it off made the failure go");
      } else if (auto bisected = bisect_applications(result_.stage, *culprit, applications); !bisected) {
        return bisected.error();
      }
    }
  } else if (!subsystems.empty()) {
    result_.notes.push_back("no subsystem of " + result_.stage + " makes the failure go when switched off: it is in " +
                            "what CompilerBisector cannot switch off (for Inductor, its scheduling and code generation)");
  }
  name_target();
  result_.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result_;
}

}  // namespace

Expected<BisectResult> bisect(const pool::PoolAccess& access, const verdict::EvaluationSpec& spec, const GraphDocument& document,
                              const std::filesystem::path& store, verdict::FailureJudge& judge) {
  return Bisection(access, spec, document, store, judge).run();
}

}  // namespace minifyd::bisect
