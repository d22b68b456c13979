//===- fbl-model.cpp - Writes a model's forward training graph ------------===//
//
//   fbl-model --model <preset|config.json> [--seq N] [--batch B]
//       [--task causal-lm|masked-lm|classification] [-o M.mlir]
//
// writes the forward training model of a LLaMA-, Qwen2- or Gemma-style
// decoder (loss of the next-token prediction) or of a BERT encoder (masked-LM
// or sequence-classification loss) as MLIR, ready for fbl-opt's training
// pipeline. `--list-presets` prints the bundled configs,
// `--describe` the model's dimensions and parameter count.
//
//===----------------------------------------------------------------------===//

#include "fbl/Models/Model.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace fbl::models;

static cl::OptionCategory category("fbl-model options");

static cl::opt<std::string> modelName("model", cl::cat(category),
                                      cl::desc("Preset name or config.json"),
                                      cl::value_desc("preset|file"));
static cl::opt<int64_t> seqLen("seq", cl::cat(category),
                               cl::desc("Sequence length"), cl::init(128));
static cl::opt<int64_t> batchSize("batch", cl::cat(category),
                                  cl::desc("Batch size"), cl::init(1));
static cl::opt<std::string> outputFile("o", cl::cat(category),
                                       cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"));
static cl::opt<std::string> funcName("name", cl::cat(category),
                                     cl::desc("Name of the model function"),
                                     cl::init("model"));
static cl::opt<std::string>
    taskName("task", cl::cat(category),
             cl::desc("What the model learns: causal-lm (decoders), masked-lm "
                      "or classification (BERT); default: the config's "
                      "architectures"),
             cl::value_desc("task"));
static cl::opt<bool> listPresets("list-presets", cl::cat(category),
                                 cl::desc("Print the bundled configs"));
static cl::opt<bool> printConfig("print-config", cl::cat(category),
                                 cl::desc("Print the config.json text"));
static cl::opt<bool> describe("describe", cl::cat(category),
                              cl::desc("Print the model's dimensions"));

static int fail(const Twine &message) {
  WithColor::error(errs(), "fbl-model") << message << "\n";
  return 1;
}

static void printDescription(raw_ostream &os, const ModelConfig &c) {
  if (c.isDiffusion()) {
    std::string channels, heads, blocks;
    for (auto [ch, h, cross] : llvm::zip_equal(c.blockOutChannels, c.unetHeads,
                                               c.crossAttentionBlocks)) {
      channels += (channels.empty() ? "" : ",") + std::to_string(ch);
      heads += (heads.empty() ? "" : ",") + std::to_string(h);
      blocks += blocks.empty() ? "" : ",";
      blocks += cross ? "cross-attention" : "resnet";
    }
    os << formatv("family {0} (UNet2DConditionModel), {1}, levels of "
                  "{2} channels ({3}; heads {4}), {5} ResNet blocks per down "
                  "block, {6} groups, {7}x{7} latents of {8} channels, text "
                  "context {9} wide, {10:N} parameters\n",
                  c.familyName(), c.taskName(), channels, blocks, heads,
                  c.layersPerBlock, c.normGroups, c.sampleSize, c.inChannels,
                  c.crossAttentionDim, c.numParameters());
    return;
  }
  if (c.isSpeech()) {
    os << formatv("family {0} (model_type {1}), {2}, {3} encoder and {4} "
                  "decoder layers, d_model {5}, ffn {6}, heads {7} (head_dim "
                  "{8}), {9} mel bins x {10} frames, vocab {11}, tied "
                  "embeddings, {12:N} parameters\n",
                  c.familyName(), c.modelType, c.taskName(), c.numEncoderLayers,
                  c.numLayers, c.hiddenSize, c.intermediateSize, c.numHeads,
                  c.headDim, c.numMelBins, 2 * c.maxSourcePositions,
                  c.vocabSize, c.numParameters());
    return;
  }
  if (c.isVision()) {
    os << formatv("family {0} (model_type {1}), {2}, {3} layers, hidden {4}, "
                  "intermediate {5}, heads {6} (head_dim {7}), {8}x{8} "
                  "images of {9} channels in {10} patches of {11}x{11}, {12} "
                  "labels, {13:N} parameters\n",
                  c.familyName(), c.modelType, c.taskName(), c.numLayers,
                  c.hiddenSize, c.intermediateSize, c.numHeads, c.headDim,
                  c.imageSize, c.numChannels, c.numPatches(), c.patchSize,
                  c.numLabels, c.numParameters());
    return;
  }
  if (c.isEncoder()) {
    os << formatv("family {0} (model_type {1}), {2}, {3} layers, hidden {4}, "
                  "intermediate {5}, heads {6} (head_dim {7}), vocab {8}, "
                  "{9} token types{10}, {11:N} parameters\n",
                  c.familyName(), c.modelType, c.taskName(), c.numLayers,
                  c.hiddenSize, c.intermediateSize, c.numHeads, c.headDim,
                  c.vocabSize, c.typeVocabSize,
                  c.task == Task::SequenceClassification
                      ? formatv(", {0} labels", c.numLabels).str()
                      : std::string(),
                  c.numParameters());
    return;
  }
  os << formatv("family {0} (model_type {1}), {2} layers, hidden {3}, "
                "intermediate {4}, heads {5} (kv {6}, head_dim {7}), vocab "
                "{8}, {9} embeddings, {10:N} parameters\n",
                c.familyName(), c.modelType, c.numLayers, c.hiddenSize,
                c.intermediateSize, c.numHeads, c.numKeyValueHeads, c.headDim,
                c.vocabSize, c.tieWordEmbeddings ? "tied" : "untied",
                c.numParameters());
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "fbl model builder\n");
  if (listPresets) {
    for (StringRef name : presetNames()) {
      Expected<ModelConfig> c = ModelConfig::load(name);
      if (!c)
        return fail(toString(c.takeError()));
      outs() << name << ": ";
      printDescription(outs(), *c);
    }
    return 0;
  }
  if (modelName.empty())
    return fail("--model is required (a preset or a config.json; "
                "--list-presets shows the presets)");
  Expected<ModelConfig> config = ModelConfig::load(modelName);
  if (!config)
    return fail(toString(config.takeError()));
  if (!taskName.empty()) {
    std::optional<Task> task = parseTask(taskName);
    if (!task)
      return fail("--task '" + taskName +
                  "' is not a task (causal-lm, masked-lm, classification)");
    config->task = *task;
  }
  if (printConfig) {
    outs() << *ModelConfig::loadText(modelName);
    return 0;
  }
  if (describe) {
    printDescription(outs(), *config);
    return 0;
  }

  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  std::string diagnostic;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (diagnostic.empty())
      diagnostic = d.str();
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  if (failed(buildModel(*module, *config, {batchSize, seqLen}, funcName)))
    return fail(diagnostic);
  if (failed(mlir::verify(*module)))
    return fail("internal error: the built model does not verify: " +
                diagnostic);

  std::string error;
  std::unique_ptr<ToolOutputFile> out =
      mlir::openOutputFile(outputFile, &error);
  if (!out)
    return fail(error);
  out->os() << "// " << modelName << ": ";
  printDescription(out->os(), *config);
  TrainingShape shape = modelShape(*config, {batchSize, seqLen});
  out->os() << "// batch " << shape.batch << ", seq " << shape.seq << "\n";
  module->print(out->os());
  out->os().flush();
  if (out->os().has_error()) {
    out->os().clear_error();
    return fail("cannot write '" + outputFile + "'");
  }
  out->keep();
  return 0;
}
