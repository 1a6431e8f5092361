// `minify store stat|verify|gc DIR`: inspect, check and collect a content store.
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/content_store.h"
#include "common/graph_codec.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"

namespace minifyd::cli {
namespace {

namespace fs = std::filesystem;

struct StoreOptions {
  std::string dir;
  bool json = false;
};

// DIR may be the store itself or a graph directory holding one in store/.
Expected<ContentStore> open_store(const std::string& dir) {
  fs::path path(dir);
  std::error_code ec;
  if (!fs::exists(path / "VERSION", ec) && fs::exists(path / store_dir_name / "VERSION", ec))
    path /= store_dir_name;
  return ContentStore::open(path, false);
}

int report_error(const char* command, const Error& error, bool json) {
  if (json) std::cout << nlohmann::json{{"error", error.message}}.dump() << "\n";
  else std::cerr << "minify store " << command << ": " << error.message << "\n";
  return options::exit_usage;
}

int stat(const StoreOptions& options) {
  auto store = open_store(options.dir);
  if (!store) return report_error("stat", store.error(), options.json);
  auto stats = store->stat();
  if (!stats) return report_error("stat", stats.error(), options.json);
  if (options.json) {
    std::cout << nlohmann::json{{"store", store->root().string()}, {"blobs", stats->blobs},
                                {"bytes", stats->bytes}, {"roots", stats->roots},
                                {"referenced_blobs", stats->referenced_blobs},
                                {"unreferenced_blobs", stats->blobs - stats->referenced_blobs},
                                {"missing_blobs", stats->missing_blobs}}.dump() << "\n";
  } else {
    std::cout << store->root().string() << ": " << stats->blobs << " blobs, " << stats->bytes
              << " bytes, " << stats->roots << " roots; " << stats->referenced_blobs
              << " blobs referenced, " << stats->blobs - stats->referenced_blobs
              << " unreferenced, " << stats->missing_blobs << " missing\n";
  }
  return options::exit_ok;
}

int verify(const StoreOptions& options) {
  auto store = open_store(options.dir);
  if (!store) return report_error("verify", store.error(), options.json);
  auto report = store->verify();
  if (!report) return report_error("verify", report.error(), options.json);
  if (options.json) {
    std::cout << nlohmann::json{{"store", store->root().string()},
                                {"blobs_checked", report->blobs_checked},
                                {"problems", report->problems}}.dump() << "\n";
  } else {
    for (const std::string& problem : report->problems) std::cout << problem << "\n";
    std::cout << store->root().string() << ": " << report->blobs_checked << " blobs checked, "
              << report->problems.size() << " problems\n";
  }
  return report->problems.empty() ? options::exit_ok : options::exit_failed;
}

int gc(const StoreOptions& options) {
  auto store = open_store(options.dir);
  if (!store) return report_error("gc", store.error(), options.json);
  auto report = store->gc();
  if (!report) return report_error("gc", report.error(), options.json);
  if (options.json) {
    std::cout << nlohmann::json{{"store", store->root().string()},
                                {"blobs_removed", report->blobs_removed},
                                {"bytes_removed", report->bytes_removed},
                                {"blobs_kept", report->blobs_kept},
                                {"temp_files_removed", report->temp_files_removed}}.dump() << "\n";
  } else {
    std::cout << store->root().string() << ": removed " << report->blobs_removed << " blobs ("
              << report->bytes_removed << " bytes) and " << report->temp_files_removed
              << " temp files; kept " << report->blobs_kept << " blobs\n";
  }
  return options::exit_ok;
}

}  // namespace

void add_store_commands(CLI::App& app, Action& action) {
  CLI::App* store = app.add_subcommand("store", "Inspect and maintain a content store");
  store->require_subcommand(1);
  struct Entry {
    const char* name;
    const char* help;
    int (*run)(const StoreOptions&);
  };
  static constexpr Entry entries[] = {
      {"stat", "Count blobs, bytes and roots", stat},
      {"verify", "Re-hash every blob; report corrupted blobs and roots naming missing ones", verify},
      {"gc", "Delete blobs that no root names, and leftover temp files", gc},
  };
  for (const Entry& entry : entries) {
    auto options = std::make_shared<StoreOptions>();
    CLI::App* command = store->add_subcommand(entry.name, entry.help);
    command->add_option("dir", options->dir, "the store, or a graph directory holding store/")->required();
    command->add_flag("--json", options->json, "print the result as JSON");
    command->callback([options, &action, run = entry.run] { action = [options, run] { return run(*options); }; });
  }
}

}  // namespace minifyd::cli
