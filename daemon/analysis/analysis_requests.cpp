// Propagate, then the isolated and in-place requests, answered in any order.
#include "daemon/analysis/analysis_requests.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>

#include "common/graph_codec.h"
#include "daemon/pool/request_batch.h"
#include "daemon/propagation/propagation.h"
#include "daemon/search/node_isolation.h"
#include "daemon/verdict/verdict_of_outcome.h"

namespace minifyd::analysis {
namespace {

protocol::AnalyzeRequest analyze_request(const AnalysisPlan& plan, const GraphDocument& document,
                                         const std::filesystem::path& store, std::vector<std::string> nodes) {
  protocol::AnalyzeRequest request;
  request.graph = encode_graph_document(document);
  request.store = store.string();
  request.backend = plan.spec.backend;
  request.backend_options = plan.spec.backend_options;
  request.nodes = std::move(nodes);
  request.op_libraries = plan.spec.op_libraries;
  return request;
}

// What one answer says of the nodes it was asked about: their measurements, or the failure that
// left none.
struct Answer {
  std::map<std::string, NodeResult> results;
  NodeResult failure;
  std::string exposure;
};

// Errors: the worker could not analyze at all.
Expected<Answer> answer_of(const pool::WorkerOutcome& outcome, const std::vector<std::string>& nodes) {
  Answer answer;
  if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome)) {
    if (auto* error = std::get_if<protocol::ErrorReply>(reply)) return make_error(ErrorKind::invalid_input, "the worker refused to analyze: " + error->message);
    auto* analyzed = std::get_if<protocol::AnalyzeReply>(reply);
    if (analyzed == nullptr) return make_error(ErrorKind::io, "the worker answered an analyze request with another reply");
    answer.exposure = analyzed->exposure;
    if (analyzed->compiled_failure || analyzed->eager_failure) {
      answer.failure.failure = analyzed->compiled_failure ? analyzed->compiled_failure : analyzed->eager_failure;
      answer.failure.failed = analyzed->compiled_failure ? "compiled" : "eager";
      return answer;
    }
    if (analyzed->values.size() != nodes.size())
      return make_error(ErrorKind::io, "the worker measured " + std::to_string(analyzed->values.size()) + " values of " +
                                           std::to_string(nodes.size()));
    for (const protocol::ValueMeasurement& value : analyzed->values) answer.results[value.node].measurement = value;
    return answer;
  }
  auto verdict = verdict::verdict_of(outcome);  // a crash or a timeout is a verdict; anything else an error
  if (!verdict) return verdict.error();
  answer.failure.failure = std::move(*verdict);
  answer.failure.failed = "compiled";
  return answer;
}

}  // namespace

Expected<Analysis> run_analysis(const GraphDocument& original, const std::filesystem::path& store,
                                const AnalysisPlan& plan, const pool::PoolAccess& pool) {
  Analysis analysis;
  analysis.backend = plan.spec.backend;
  analysis.backend_options = plan.spec.backend_options;
  analysis.modes = plan.modes;
  std::vector<std::string> names;
  std::map<std::string, std::size_t> index;
  std::vector<Node*> nodes = original.graph.nodes();
  for (std::size_t position = 0; position < nodes.size(); ++position) {
    // A getitem only reads a part of a tuple-valued node, which is measured as the whole tuple.
    if (nodes[position]->op() != OpCode::call_function || nodes[position]->target() == getitem_target) continue;
    index[nodes[position]->name()] = analysis.nodes.size();
    names.push_back(nodes[position]->name());
    analysis.nodes.push_back(NodeAnalysis{nodes[position]->name(), nodes[position]->target(), position, {}, {}});
  }

  // The isolated nodes load the original's eager values, written into the store first (where eager
  // fails, those before the failure); the in-place run computes its own.
  search::SearchState state;
  if (std::find(plan.modes.begin(), plan.modes.end(), Mode::isolated) != plan.modes.end()) {
    auto propagated = propagation::propagate(pool, original, store, plan.spec.timeout, plan.spec.op_libraries, /*for_analysis=*/true);
    if (!propagated) return propagated.error().with_context("propagating the eager values");
    ++analysis.requests;
    analysis.eager_failure = propagated->eager_failure;
    state = search::SearchState{search::clone_document(original), {},
                                std::make_shared<const search::EagerValues>(search::eager_values_from(propagated->values))};
  }

  // What is still queued or running when an answer fails is of no use: the batch's end cancels it.
  pool::RequestBatch batch(pool);
  std::optional<Error> error;
  auto submit = [&](const GraphDocument& document, std::vector<std::string> requested,
                    std::function<void(Answer)> record) {
    batch.submit(analyze_request(plan, document, store, requested), plan.spec.timeout,
                 [&, requested, record](pool::WorkerOutcome outcome) {
                   auto answer = answer_of(outcome, requested);
                   if (!answer && !error) error = answer.error();
                   if (answer) record(std::move(*answer));
                 });
    ++analysis.requests;
  };
  for (Mode mode : plan.modes) {
    if (error) break;
    if (mode == Mode::in_place) {
      submit(original, names, [&](Answer answer) {
        analysis.exposure = answer.exposure;
        if (answer.failure.failed == "eager" && !analysis.eager_failure) analysis.eager_failure = answer.failure.failure;
        if (answer.failure.failure) analysis.in_place_failure = std::move(answer.failure);
        for (auto& [name, result] : answer.results) analysis.nodes[index.at(name)].in_place = std::move(result);
      });
      continue;
    }
    for (const std::string& name : names) {
      auto isolated = search::isolate_nodes(state, {name});
      if (!isolated) {
        error = isolated.error();
        break;
      }
      submit(isolated->document, {name}, [&, name](Answer answer) {
        auto found = answer.results.find(name);
        analysis.nodes[index.at(name)].isolated =
            found != answer.results.end() ? std::move(found->second) : std::move(answer.failure);
      });
    }
  }
  if (!batch.run_while([&] { return batch.unanswered() != 0 && !error; }))
    error = make_error(ErrorKind::io, "the worker pool stopped answering");
  if (error) return *error;
  return analysis;
}

}  // namespace minifyd::analysis
