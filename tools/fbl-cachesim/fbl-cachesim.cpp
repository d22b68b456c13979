//===- fbl-cachesim.cpp - Trace-driven texture-cache simulation -----------===//
//
//   fbl-cachesim [step.mlir] [--target=NAME|#fbl.target<...>] [--groups=N]
//                [--kernel=NAME] [--json] [--compare [--min-spearman=X]]
//                [--trace]
//
// replays the accesses of every fbl.dispatch of a module (after
// fbl-lower-to-kernels) through the target's texture cache and reports
// fetches, misses, writes and an estimated time per kernel and per
// function; `--compare` sets the cost model's `fbl.estimate` of each kernel
// next to them and measures how well the two rank the kernels.
// docs/CacheSim.md explains what is simulated.
//
//===----------------------------------------------------------------------===//

#include "fbl/CacheSim/Cache.h"
#include "fbl/CacheSim/KernelCompiler.h"
#include "fbl/CacheSim/Simulator.h"
#include "fbl/CacheSim/Statistics.h"
#include "fbl/Dialect/FBL/IR/FBLAttrs.h"
#include "fbl/Dialect/FBL/IR/FBLDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <ctime>
#include <optional>

using namespace mlir;
using namespace mlir::fbl;
namespace cs = ::fbl::cachesim;
using llvm::formatv;

static llvm::cl::OptionCategory category("fbl-cachesim options");
static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<module.mlir>"),
                                            llvm::cl::init("-"),
                                            llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    targetOption("target",
                 llvm::cl::desc("Simulate for this target (a preset name or "
                                "#fbl.target<...>) instead of the module's"),
                 llvm::cl::cat(category));
static llvm::cl::opt<int64_t> groupsOption(
    "groups",
    llvm::cl::desc("Work-groups of compute unit 0 to run per kernel "
                   "(default: 8 resident sets; 0: all)"),
    llvm::cl::init(-1), llvm::cl::cat(category));
static llvm::cl::opt<bool> exactOption(
    "exact",
    llvm::cl::desc("Run every work-group on every compute unit (no sample)"),
    llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    kernelOption("kernel", llvm::cl::desc("Simulate only this kernel"),
                 llvm::cl::cat(category));
static llvm::cl::opt<bool> jsonOption("json",
                                      llvm::cl::desc("Print JSON, not a table"),
                                      llvm::cl::cat(category));
static llvm::cl::opt<bool> compareOption(
    "compare",
    llvm::cl::desc("Show the cost model's fbl.estimate next to the "
                   "simulation, with Spearman rank correlations"),
    llvm::cl::cat(category));
static llvm::cl::opt<double> minSpearmanOption(
    "min-spearman",
    llvm::cl::desc("With --compare: exit 1 when a rank correlation is below "
                   "this"),
    llvm::cl::init(-2.0), llvm::cl::cat(category));
static llvm::cl::opt<bool>
    traceOption("trace",
                llvm::cl::desc("Print every access in the order it is issued"),
                llvm::cl::cat(category));

/// Resident sets the default sample runs per kernel.
constexpr int64_t kDefaultResidentSets = 8;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "fbl-cachesim") << message << "\n";
  return 1;
}

namespace {

/// The cost model's numbers for one kernel (`fbl.estimate`).
struct Estimate {
  double fetches = 0, misses = 0, writes = 0, timeNs = 0;
};

struct KernelReport {
  std::string name;
  std::array<int64_t, 3> grid, workgroup;
  cs::KernelResult result;
  std::optional<Estimate> estimate;
};

struct FunctionReport {
  std::string name;
  std::vector<KernelReport> kernels;
  /// CPU time compiling and simulating its kernels.
  double seconds = 0;
  double fetches = 0, misses = 0, writes = 0, timeNs = 0;
};

} // namespace

/// The cost model's estimate on `dispatch` (the dialect verifies its
/// fields), if there is one.
static std::optional<Estimate> readEstimate(DispatchOp dispatch) {
  auto dict = dispatch->getAttrOfType<DictionaryAttr>(
      FBLDialect::getEstimateAttrName());
  if (!dict)
    return std::nullopt;
  auto count = [&](StringRef key) {
    return double(dict.getAs<IntegerAttr>(key).getInt());
  };
  return Estimate{count("fetches"), count("misses"), count("writes"),
                  dict.getAs<FloatAttr>("time_ns").getValueAsDouble()};
}

static std::string dims(const std::array<int64_t, 3> &d) {
  return formatv("{0}x{1}x{2}", d[0], d[1], d[2]).str();
}

static const char *accessKind(cs::AccessEvent::Kind k) {
  switch (k) {
  case cs::AccessEvent::TexelRead:
  case cs::AccessEvent::BufferRead:
    return "read";
  case cs::AccessEvent::TexelWrite:
  case cs::AccessEvent::BufferWrite:
    return "write";
  }
  return "";
}

static void printTrace(const cs::Program &p, const cs::AccessEvent &e) {
  llvm::raw_ostream &os = llvm::outs();
  os << "@" << p.kernel << " " << accessKind(e.kind) << " "
     << p.operands[e.operand].name;
  if (e.kind == cs::AccessEvent::TexelRead ||
      e.kind == cs::AccessEvent::TexelWrite)
    os << formatv(" [{0}, {1}, {2}]", e.layer, e.y, e.x);
  else
    os << formatv(" [{0}] line {1}", e.x,
                  e.x * p.operands[e.operand].elementBytes /
                      cs::kBufferLineBytes);
  os << formatv(" item ({0}, {1}, {2})", e.item[0], e.item[1], e.item[2]);
  if (e.kind == cs::AccessEvent::TexelRead ||
      e.kind == cs::AccessEvent::BufferRead)
    os << (e.hit ? " hit" : " miss");
  os << "\n";
}

/// Spearman of misses and of time over the kernels with an estimate.
struct Agreement {
  size_t kernels = 0;
  std::optional<double> misses, time;
};

static Agreement agreement(ArrayRef<FunctionReport> functions) {
  std::vector<double> simMisses, modelMisses, simTime, modelTime;
  for (const FunctionReport &f : functions)
    for (const KernelReport &k : f.kernels)
      if (k.estimate) {
        simMisses.push_back(k.result.misses);
        modelMisses.push_back(k.estimate->misses);
        simTime.push_back(k.result.timeNs);
        modelTime.push_back(k.estimate->timeNs);
      }
  return {simMisses.size(), cs::spearman(simMisses, modelMisses),
          cs::spearman(simTime, modelTime)};
}

static std::string rho(std::optional<double> r) {
  return r ? formatv("{0:F3}", *r).str() : std::string("undefined");
}

static void printTable(const ::fbl::target::TargetDescription &t,
                       ArrayRef<FunctionReport> functions,
                       const Agreement &agree) {
  llvm::raw_ostream &os = llvm::outs();
  const ::fbl::target::ExecutionModel &e = t.execution;
  os << formatv("target {0}: compute units {1}, wave {2}, resident "
                "work-items {3} per unit; texture cache {4} B, {5}-way, "
                "{6}x{7}-texel lines\n",
                t.name, e.computeUnits, e.waveSize, e.residentItems,
                t.cacheBytes, t.cacheWays, t.cacheLineTexels[0],
                t.cacheLineTexels[1]);
  for (const FunctionReport &f : functions) {
    os << "\n@" << f.name << "\n";
    os << formatv("{0,-22} {1,-12} {2,-9} {3,9} {4,12} {5,11} {6,6} {7,11} "
                  "{8,10}",
                  "kernel", "grid", "group", "groups", "fetches", "misses",
                  "hit%", "writes", "time us");
    if (compareOption)
      os << formatv(" {0,12} {1,11} {2,10}", "model fetch", "model miss",
                    "model us");
    os << "\n";
    for (const KernelReport &k : f.kernels) {
      const cs::KernelResult &r = k.result;
      std::string hit =
          r.fetches > 0
              ? formatv("{0:F1}", 100.0 * (1.0 - r.misses / r.fetches)).str()
              : std::string("-");
      os << formatv("{0,-22} {1,-12} {2,-9} {3,9} {4,12:F0} {5,11:F0} {6,6} "
                    "{7,11:F0} {8,10:F2}",
                    k.name, dims(k.grid), dims(k.workgroup),
                    formatv("{0}/{1}", r.groupsSimulated, r.groupsTotal).str(),
                    r.fetches, r.misses, hit, r.writes, r.timeNs / 1000.0);
      if (compareOption) {
        if (k.estimate)
          os << formatv(" {0,12:F0} {1,11:F0} {2,10:F2}", k.estimate->fetches,
                        k.estimate->misses, k.estimate->timeNs / 1000.0);
        else
          os << formatv(" {0,12} {1,11} {2,10}", "-", "-", "-");
      }
      os << "\n";
    }
    double hit = f.fetches > 0 ? 100.0 * (1.0 - f.misses / f.fetches) : 0.0;
    os << formatv("total @{0}: {1} kernels, {2:F0} fetches, {3:F0} misses "
                  "({4:F1}% hits), {5:F0} writes, {6:F2} us; simulated in "
                  "{7:F2} s CPU\n",
                  f.name, f.kernels.size(), f.fetches, f.misses, hit, f.writes,
                  f.timeNs / 1000.0, f.seconds);
  }
  if (compareOption)
    os << formatv("\nspearman over {0} kernels with fbl.estimate: misses {1}, "
                  "time {2}\n",
                  agree.kernels, rho(agree.misses), rho(agree.time));
}

static nlohmann::json toJson(const ::fbl::target::TargetDescription &t,
                             ArrayRef<FunctionReport> functions,
                             const Agreement &agree) {
  using nlohmann::json;
  const ::fbl::target::ExecutionModel &e = t.execution;
  json root;
  root["target"] = {{"name", t.name},
                    {"compute_units", e.computeUnits},
                    {"wave_size", e.waveSize},
                    {"resident_items", e.residentItems},
                    {"cache_bytes", t.cacheBytes},
                    {"cache_ways", t.cacheWays},
                    {"cache_line_texels", t.cacheLineTexels}};
  root["functions"] = json::array();
  for (const FunctionReport &f : functions) {
    json kernels = json::array();
    for (const KernelReport &k : f.kernels) {
      const cs::KernelResult &r = k.result;
      const cs::AccessCounts &s = r.simulated;
      json kj = {{"name", k.name},
                 {"grid", k.grid},
                 {"workgroup", k.workgroup},
                 {"groups", r.groupsTotal},
                 {"groups_simulated", r.groupsSimulated},
                 {"compute_units_used", r.computeUnitsUsed},
                 {"fetches", r.fetches},
                 {"misses", r.misses},
                 {"writes", r.writes},
                 {"multiplies", r.multiplies},
                 {"item_accesses", r.itemAccesses},
                 {"time_ns", r.timeNs},
                 {"simulated",
                  {{"texel_fetches", s.texelFetches},
                   {"texel_misses", s.texelMisses},
                   {"texel_writes", s.texelWrites},
                   {"buffer_reads", s.bufferReads},
                   {"buffer_misses", s.bufferMisses},
                   {"buffer_writes", s.bufferWrites},
                   {"work_items", r.workItems},
                   {"instructions", r.instructions}}}};
      if (k.estimate)
        kj["estimate"] = {{"fetches", k.estimate->fetches},
                          {"misses", k.estimate->misses},
                          {"writes", k.estimate->writes},
                          {"time_ns", k.estimate->timeNs}};
      kernels.push_back(kj);
    }
    root["functions"].push_back({{"name", f.name},
                                 {"kernels", kernels},
                                 {"fetches", f.fetches},
                                 {"misses", f.misses},
                                 {"writes", f.writes},
                                 {"time_ns", f.timeNs},
                                 {"cpu_seconds", f.seconds}});
  }
  if (compareOption) {
    auto value = [](std::optional<double> r) {
      return r ? json(*r) : json(nullptr);
    };
    root["spearman"] = {{"kernels", agree.kernels},
                        {"misses", value(agree.misses)},
                        {"time", value(agree.time)}};
  }
  return root;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "fbl-cachesim: replays fbl kernels' accesses through a texture cache\n");
  if (minSpearmanOption.getNumOccurrences() && !compareOption)
    return fail("--min-spearman needs --compare");
  if (groupsOption < -1)
    return fail("--groups must be 0 (all) or a positive count");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<FBLDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics as one line each: "file:line:col: error: message".
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &d) {
    if (auto loc = d.getLocation()->findInstanceOf<FileLineColLoc>())
      llvm::errs() << loc.getFilename().getValue() << ":" << loc.getLine()
                   << ":" << loc.getColumn() << ": ";
    const char *severity[] = {"note", "warning", "error", "remark"};
    llvm::errs() << severity[unsigned(d.getSeverity())] << ": " << d.str()
                 << "\n";
    return success();
  });
  llvm::SourceMgr sourceMgr;
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  TargetAttr target;
  if (!targetOption.empty()) {
    if (StringRef(targetOption).starts_with("#")) {
      // A text that does not parse has had its diagnostic.
      Attribute parsed = parseAttribute(targetOption, &context);
      if (!parsed)
        return 1;
      target = dyn_cast<TargetAttr>(parsed);
      if (!target)
        return fail("--target: '" + targetOption +
                    "' is not an #fbl.target attribute");
    } else {
      target = TargetAttr::getPreset(&context, targetOption);
      if (!target)
        return fail("--target: unknown target '" + targetOption +
                    "' (presets: " + ::fbl::target::presetNames() +
                    "; or give #fbl.target<...>)");
    }
  } else {
    target = TargetAttr::lookup(*module);
    if (!target)
      return fail("the module has no fbl.target; give --target");
  }
  ::fbl::target::TargetDescription description = target.getDescription();

  std::vector<FunctionReport> functions;
  bool kernelFound = kernelOption.empty();
  for (auto func : module->getOps<FunctionOpInterface>()) {
    FunctionReport report;
    report.name = func.getName().str();
    std::clock_t start = std::clock();
    WalkResult walk = func->walk([&](DispatchOp dispatch) {
      if (!kernelOption.empty() && dispatch.getKernel() != kernelOption)
        return WalkResult::advance();
      kernelFound = true;
      FailureOr<cs::Program> program = compileKernel(dispatch);
      if (failed(program))
        return WalkResult::interrupt();
      cs::SimulationOptions options;
      int64_t resident = std::max<int64_t>(
          1, description.execution.residentItems / program->groupItems());
      options.groups =
          groupsOption >= 0 ? groupsOption : kDefaultResidentSets * resident;
      options.everyUnit = exactOption;
      if (traceOption)
        options.trace = [&](const cs::AccessEvent &e) {
          printTrace(*program, e);
        };
      KernelReport k;
      k.name = program->kernel;
      k.grid = program->grid;
      k.workgroup = program->workgroup;
      k.estimate = readEstimate(dispatch);
      if (!cs::simulate(*program, description, options, k.result, error)) {
        fail(error);
        return WalkResult::interrupt();
      }
      report.fetches += k.result.fetches;
      report.misses += k.result.misses;
      report.writes += k.result.writes;
      report.timeNs += k.result.timeNs;
      report.kernels.push_back(std::move(k));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return 1;
    report.seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
    if (!report.kernels.empty())
      functions.push_back(std::move(report));
  }
  if (!kernelFound)
    return fail("no kernel @" + kernelOption + " in the module");
  if (functions.empty())
    return fail("the module has no fbl.dispatch kernels (run "
                "fbl-lower-to-kernels or the training pipeline first)");

  Agreement agree = agreement(functions);
  if (jsonOption)
    llvm::outs() << toJson(description, functions, agree).dump(2) << "\n";
  else if (!traceOption)
    printTable(description, functions, agree);

  if (minSpearmanOption.getNumOccurrences()) {
    double bound = minSpearmanOption;
    for (auto [what, r] :
         {std::pair{"misses", agree.misses}, std::pair{"time", agree.time}})
      if (!r || *r < bound)
        return fail(formatv("spearman of {0} is {1} over {2} kernels, below "
                            "--min-spearman={3}",
                            what, rho(r), agree.kernels, bound)
                        .str());
  }
  return 0;
}
