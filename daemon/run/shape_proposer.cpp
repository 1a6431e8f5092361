#include "daemon/run/shape_proposer.h"

#include <nlohmann/json.hpp>

#include "common/graph_codec.h"
#include "common/json_view.h"
#include "common/tensor_codec.h"
#include "daemon/process/python_helper.h"
#include "daemon/run/scratch_graph_dir.h"

namespace minifyd::run {
namespace {

// "s0=512, s1=2" of {"s0": 512, "s1": 2}.
Expected<std::string> sizes_text(const JsonView& view) {
  if (auto object = view.as_object(); !object) return object.error();
  std::string text;
  for (const auto& [name, value] : view.raw().items()) {
    auto number = JsonView(value, view.path() + "." + name).as_int();
    if (!number) return number.error();
    text += (text.empty() ? "" : ", ") + name + "=" + std::to_string(*number);
  }
  return text;
}

Expected<shrink::ShapeProposal> decode_proposal(const JsonView& view) {
  shrink::ShapeProposal proposal;
  if (auto read = view.read("name", proposal.name); !read) return read.error();
  auto sizes = view.field("sizes");
  if (!sizes) return sizes.error();
  auto text = sizes_text(*sizes);
  if (!text) return text.error();
  proposal.sizes = *text;
  if (auto storages = view.append_items("storages", decode_storage_ref, proposal.storages); !storages)
    return storages.error();
  if (auto inputs = view.append_items("inputs", decode_graph_input, proposal.inputs); !inputs) return inputs.error();
  return proposal;
}

Expected<shrink::ShapeProposals> decode_proposals(const nlohmann::json& json) {
  JsonView view(json);
  shrink::ShapeProposals proposals;
  auto symbols = view.field("symbols");
  if (!symbols) return symbols.error();
  auto sizes = sizes_text(*symbols);
  if (!sizes) return sizes.error();
  proposals.sizes = *sizes;
  if (auto read = view.read("note", proposals.note); !read) return read.error();
  if (auto listed = view.append_items("proposals", decode_proposal, proposals.proposals); !listed) return listed.error();
  return proposals;
}

}  // namespace

shrink::ShapeProposer shape_proposer(std::string python, std::filesystem::path store, std::string root) {
  return [python = std::move(python), store = std::move(store),
          root = std::move(root)](const GraphDocument& document) -> Expected<shrink::ShapeProposals> {
    auto scratch = ScratchGraphDir::write(document, store, "minifyd-shapes-");
    if (!scratch) return scratch.error();
    auto output = process::run_python_main(python, "shape_shrink",
                                  {scratch->path().string(), "--store", std::filesystem::absolute(store).string(),
                                   "--root", root},
                                  process::helper_timeout_seconds);
    if (!output) return output.error().with_context("minifyd/shape_shrink.py");
    auto json = parse_json(*output);
    if (!json) return json.error().with_context("minifyd/shape_shrink.py's output");
    auto proposals = decode_proposals(*json);
    if (!proposals) return proposals.error().with_context("minifyd/shape_shrink.py's output");
    for (const shrink::ShapeProposal& proposal : proposals->proposals) {
      if (proposal.inputs.size() != document.inputs.size() || proposal.storages.size() != document.storages.size())
        return make_error(ErrorKind::corrupt, "minifyd/shape_shrink.py's proposal '" + proposal.name +
                                                  "' has other storages or inputs than the graph");
    }
    return proposals;
  };
}

}  // namespace minifyd::run
