//===- fbl-finetune.cpp - Fine-tune a model on the OpenCL device ----------===//
//
//   fbl-finetune --model PRESET|config.json [--weights W.safetensors]
//       --data TEXT|DIR [--tokenizer tokenizer.json]
//       [--lora rank=8,alpha=16,targets=q_proj,v_proj | --full]
//       [--steps N] [--seq S] [--batch B] [--lr LR] [--policy P]
//       [--device SEL] [--target T] --save OUT/
//
// Builds the model's forward graph (a decoder LLM learning the next token,
// or BERT learning masked tokens: 15% of the positions, 80% of those shown
// as [MASK], 10% as a random token, 10% unchanged; or a classifier — ViT,
// BERT for sequence classification — learning the labels of --labels for
// the examples of --data, both .npy; or a diffusion UNet learning to predict
// the noise added to the latents of --data under the text context of
// --context, both .npy), adds LoRA adapters (or
// trains every weight), compiles the AdamW training step for the local OpenCL
// device (cached), then streams batches of the text through it, tokenized by
// the model's tokenizer.json (BPE, Tokenizer.h) or byte by byte, keeping
// parameters and optimizer state on the device. Prints a progress line per
// interval (step, loss, tokens/s, step time, ETA), checkpoints every K steps
// (--resume continues from the last one), and leaves in OUT/ the adapters in
// PEFT's format (or the full weights) as safetensors, loss.csv, loss.svg and
// summary.json.
//
//===----------------------------------------------------------------------===//

#include "ClassData.h"
#include "CompileStep.h"
#include "DiffusionData.h"
#include "TextData.h"
#include "Tokenizer.h"
#include "TrainingLog.h"

#include "fbl/Models/Model.h"
#include "fbl_runtime/fbl_runtime.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

using namespace llvm;
using namespace fbl;
using namespace fbl::finetune;

namespace {
cl::OptionCategory category("fbl-finetune options");
cl::opt<std::string> modelName("model",
                               cl::desc("Preset or config.json (required)"),
                               cl::value_desc("preset|file"),
                               cl::cat(category));
cl::opt<std::string>
    weightsFile("weights",
                cl::desc("Initial weights (safetensors, Hugging Face names)"),
                cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> dataPath("data",
                              cl::desc("Training text: a file or a folder; "
                                       "for a classifier an .npy of examples "
                                       "(images [N, C, S, S], token ids "
                                       "[N, S])"),
                              cl::value_desc("path"), cl::Required,
                              cl::cat(category));
cl::opt<std::string> labelsPath(
    "labels",
    cl::desc("Classifiers: an .npy of N integer labels, one per example "
             "of --data"),
    cl::value_desc("file.npy"), cl::cat(category));
cl::opt<std::string> contextPath(
    "context",
    cl::desc("Diffusion UNets: an .npy of the text encoder's hidden states "
             "[N, L, D], one per latent of --data [N, C, S, S]"),
    cl::value_desc("file.npy"), cl::cat(category));
cl::opt<std::string> tokenizerFile(
    "tokenizer",
    cl::desc("The model's Hugging Face tokenizer.json (BPE: byte-level as "
             "GPT-2/Llama-3/Qwen2, or SentencePiece-style as LLaMA-2/Gemma); "
             "default: byte-level tokens"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<bool> printTokens(
    "print-tokens",
    cl::desc("Debugging: print the token ids of each file of --data (one "
             "line each, bos included when --model is given) and exit; "
             "--model and --save are then optional"),
    cl::cat(category));
cl::opt<std::string>
    loraSpec("lora",
             cl::desc("LoRA adapters: rank=R,alpha=A,targets=NAME[,NAME...]"
                      "[,trainable=NAME...] (default rank=8,alpha=16, targets "
                      "q_proj,v_proj for decoders, query,value for BERT)"),
             cl::value_desc("options"), cl::cat(category));
cl::opt<bool> fullFinetune("full", cl::desc("Train every weight (no LoRA)"),
                           cl::cat(category));
cl::opt<int64_t> numSteps("steps", cl::desc("Training steps"), cl::init(200),
                          cl::cat(category));
cl::opt<int64_t> seqLen("seq", cl::desc("Tokens per sequence"), cl::init(128),
                        cl::cat(category));
cl::opt<int64_t> batchSize("batch", cl::desc("Sequences per step"), cl::init(4),
                           cl::cat(category));
cl::opt<double> learningRate("lr", cl::desc("AdamW learning rate"),
                             cl::init(1e-3), cl::cat(category));
cl::opt<std::string> policy("policy",
                            cl::desc("Layout policy: fblayout, reuse-forward "
                                     "or explicit-transpose"),
                            cl::init("fblayout"), cl::cat(category));
cl::opt<std::string> device("device",
                            cl::desc("OpenCL device (index, gpu, cpu or part "
                                     "of its name); default: $FBL_DEVICE, "
                                     "else the first GPU, else the CPU"),
                            cl::init(""), cl::cat(category));
cl::opt<std::string> target("target",
                            cl::desc("Target preset or #fbl.target<...> "
                                     "attribute (default: the device's)"),
                            cl::init(""), cl::cat(category));
cl::opt<std::string> saveDir("save", cl::desc("Output folder (required)"),
                             cl::value_desc("dir"), cl::cat(category));
cl::opt<int64_t> checkpointEvery("checkpoint-every",
                                 cl::desc("Checkpoint every K steps (0: only "
                                          "at the end)"),
                                 cl::init(100), cl::cat(category));
cl::opt<bool> resume("resume",
                     cl::desc("Continue from OUT/checkpoint when present"),
                     cl::cat(category));
cl::opt<bool> merge("merge",
                    cl::desc("Also write the base weights with the adapters "
                             "merged in (OUT/model.safetensors)"),
                    cl::cat(category));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of the initial weights and the "
                                "batches"),
                       cl::init(0), cl::cat(category));
cl::opt<int64_t> logEvery("log-every",
                          cl::desc("Progress line every N steps (default: "
                                   "about 20 lines)"),
                          cl::init(0), cl::cat(category));
cl::opt<std::string> saveDtype("save-dtype",
                               cl::desc("dtype of saved weights: F32, F16 or "
                                        "BF16"),
                               cl::init("F32"), cl::cat(category));
cl::opt<std::string> cacheDir("cache-dir",
                              cl::desc("Compiled-step cache (default "
                                       "$XDG_CACHE_HOME/fbl or ~/.cache/fbl; "
                                       "'none' disables it)"),
                              cl::init(""), cl::cat(category));

[[noreturn]] void die(const Twine &message) {
  std::fflush(stdout);
  WithColor::error(errs(), "fbl-finetune") << message << "\n";
  std::exit(1);
}

void check(fbl_status status) {
  if (status != FBL_OK)
    die(fbl_last_error());
}

template <typename T> T orDie(Expected<T> value) {
  if (!value)
    die(toString(value.takeError()));
  return std::move(*value);
}

void orDie(Error error) {
  if (error)
    die(toString(std::move(error)));
}

/// Whether `name` is a plain name (a preset, a projection): letters, digits,
/// '_', '.', '-'. Names go into the pass pipeline's text, where a space, a
/// brace or a comma would start another option or pass.
bool isPlainName(StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '-';
  });
}

LoraOptions parseLora(StringRef spec, StringRef defaultTargets) {
  LoraOptions lora;
  lora.targets = defaultTargets.str();
  if (spec.empty())
    return lora;
  // rank=8,alpha=16,targets=q_proj,v_proj: a bare name continues the list
  // of the key before it.
  std::string *list = nullptr;
  SmallVector<StringRef> parts;
  spec.split(parts, ',', -1, false);
  lora.targets.clear();
  for (StringRef part : parts) {
    auto [key, value] = part.split('=');
    if (!part.contains('=')) {
      if (!list)
        die("--lora: '" + part +
            "' is not key=value (rank, alpha, "
            "targets, trainable)");
      *list += "," + part.str();
      continue;
    }
    list = nullptr;
    if (key == "rank") {
      if (value.getAsInteger(10, lora.rank) || lora.rank < 1)
        die("--lora: rank must be a positive integer, got '" + value + "'");
    } else if (key == "alpha") {
      if (value.getAsDouble(lora.alpha) || !(lora.alpha > 0) ||
          !std::isfinite(lora.alpha))
        die("--lora: alpha must be a positive number, got '" + value + "'");
    } else if (key == "targets") {
      lora.targets = value.str();
      list = &lora.targets;
    } else if (key == "trainable") {
      lora.trainable = value.str();
      list = &lora.trainable;
    } else {
      die("--lora: unknown key '" + key +
          "' (rank, alpha, targets, "
          "trainable)");
    }
  }
  if (lora.targets.empty())
    lora.targets = defaultTargets.str();
  for (const std::string *names : {&lora.targets, &lora.trainable})
    for (StringRef name : split(*names, ','))
      if (!names->empty() && !isPlainName(name))
        die("--lora: '" + name +
            "' is not a module name (letters, digits, '_', '.', '-')");
  return lora;
}

std::string defaultCacheDir() {
  SmallString<256> dir;
  if (std::optional<std::string> env = sys::Process::GetEnv("FBL_CACHE_DIR"))
    return *env;
  if (std::optional<std::string> xdg = sys::Process::GetEnv("XDG_CACHE_HOME")) {
    dir = *xdg;
  } else if (std::optional<std::string> home = sys::Process::GetEnv("HOME")) {
    dir = *home;
    sys::path::append(dir, ".cache");
  } else {
    return "";
  }
  sys::path::append(dir, "fbl", "steps");
  return std::string(dir);
}

std::string pathIn(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  return std::string(path);
}

/// PEFT's task_type for the adapters of a model trained on `task`; none
/// (null) where PEFT has no such task (masked LM, images, diffusers' UNets).
json::Value peftTaskType(models::Task task) {
  switch (task) {
  case models::Task::CausalLM:
    return "CAUSAL_LM";
  case models::Task::SequenceClassification:
    return "SEQ_CLS";
  case models::Task::SpeechToText:
    return "SEQ_2_SEQ_LM";
  default:
    return nullptr;
  }
}

/// Inputs of the compiled step, found by name.
struct StepInputs {
  size_t ids = 0, labels = 0;
  /// BERT's segments and padding mask (encoders only).
  std::optional<size_t> tokenTypes, attentionMask;
  /// A speech model's decoder inputs: the labels shifted right.
  std::optional<size_t> decoderIds;
  /// A diffusion UNet's timesteps and text context (ids: the noised
  /// latents, labels: the noise).
  std::optional<size_t> timesteps, context;
  /// Whether input `i` is data the loop sets each step.
  bool isData(size_t i) const {
    return i == ids || i == labels || i == tokenTypes || i == attentionMask ||
           i == decoderIds || i == timesteps || i == context;
  }
  std::vector<size_t> params;  ///< trained (updated by the step)
  std::vector<size_t> weights; ///< named, neither data nor optimizer state
  std::vector<int64_t> shape(fbl_session *s, size_t index) const {
    int64_t dims[8];
    size_t rank = 0;
    const char *dtype = nullptr;
    int isParam = 0;
    check(fbl_session_tensor_info(s, 0, index, dims, &rank, &dtype, &isParam));
    return std::vector<int64_t>(dims, dims + rank);
  }
};

int64_t product(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

StepInputs findInputs(fbl_session *session) {
  StepInputs in;
  // The examples: token ids, a vision model's pixels, a speech model's
  // features or a UNet's noised latents; what the loss compares with.
  if (fbl_session_find_input(session, "pixel_values", &in.ids) != FBL_OK &&
      fbl_session_find_input(session, "input_features", &in.ids) != FBL_OK &&
      fbl_session_find_input(session, "sample", &in.ids) != FBL_OK)
    check(fbl_session_find_input(session, "input_ids", &in.ids));
  if (fbl_session_find_input(session, "noise", &in.labels) != FBL_OK)
    check(fbl_session_find_input(session, "labels", &in.labels));
  size_t index;
  if (fbl_session_find_input(session, "timestep", &index) == FBL_OK)
    in.timesteps = index;
  if (fbl_session_find_input(session, "encoder_hidden_states", &index) ==
      FBL_OK)
    in.context = index;
  if (fbl_session_find_input(session, "token_type_ids", &index) == FBL_OK)
    in.tokenTypes = index;
  if (fbl_session_find_input(session, "attention_mask", &index) == FBL_OK)
    in.attentionMask = index;
  if (fbl_session_find_input(session, "decoder_input_ids", &index) == FBL_OK)
    in.decoderIds = index;
  std::set<size_t> updated;
  for (size_t o = 0; o < fbl_session_num_outputs(session); ++o)
    if (int64_t u = fbl_session_output_updates(session, o); u >= 0)
      updated.insert(size_t(u));
  for (size_t i = 0; i < fbl_session_num_inputs(session); ++i) {
    StringRef name = fbl_session_input_name(session, i);
    int64_t dims[8];
    size_t rank = 0;
    const char *dtype = nullptr;
    int isParam = 0;
    check(
        fbl_session_tensor_info(session, 0, i, dims, &rank, &dtype, &isParam));
    if (in.isData(i) || name.empty() ||
        fbl_session_input_is_step_count(session, i))
      continue;
    if (isParam)
      in.params.push_back(i);
    if (isParam || !updated.count(i))
      in.weights.push_back(i);
  }
  return in;
}

/// Reads input `index` of the session as f32.
std::vector<float> readInput(fbl_session *session, const StepInputs &in,
                             size_t index) {
  std::vector<float> values(product(in.shape(session, index)));
  check(fbl_session_get_input(session, index, values.data(),
                              values.size() * sizeof(float)));
  return values;
}

/// Copies `from` to `to` renaming each tensor with `rename`.
void rewriteSafetensors(const std::string &from, const std::string &to,
                        function_ref<std::string(StringRef)> rename,
                        StringRef dtype) {
  fbl_safetensors *file = nullptr;
  check(fbl_safetensors_open(from.c_str(), &file));
  fbl_safetensors_writer *writer = nullptr;
  check(fbl_safetensors_writer_create(&writer));
  for (size_t t = 0; t < fbl_safetensors_num_tensors(file); ++t) {
    const char *name = nullptr;
    const int64_t *shape = nullptr;
    size_t rank = 0;
    check(fbl_safetensors_tensor_info(file, t, &name, nullptr, &shape, &rank));
    std::vector<int64_t> dims(shape, shape + rank);
    std::vector<float> data(product(dims));
    check(fbl_safetensors_read_f32(file, t, data.data(), data.size()));
    check(fbl_safetensors_writer_add_f32(writer, rename(name).c_str(),
                                         dims.data(), rank, data.data(),
                                         dtype.str().c_str()));
  }
  check(fbl_safetensors_writer_add_metadata(writer, "format", "pt"));
  check(fbl_safetensors_writer_write(writer, to.c_str()));
  fbl_safetensors_writer_free(writer);
  fbl_safetensors_close(file);
}

/// Writes the base weights with every adapter merged in:
/// W' = W + (alpha / rank) B A, in Hugging Face names. A frozen weight is
/// taken from `base` (the --weights file) when it holds it: on a target
/// with half_storage the device keeps only its f16 rounding.
void writeMerged(fbl_session *session, const StepInputs &in,
                 const LoraOptions &lora, const std::string &path,
                 StringRef dtype, const std::string &base) {
  fbl_safetensors *baseFile = nullptr;
  if (!base.empty())
    check(fbl_safetensors_open(base.c_str(), &baseFile));
  auto baseValue = [&](const std::string &name, size_t index) {
    size_t at;
    if (!baseFile ||
        fbl_safetensors_find(baseFile, name.c_str(), &at) != FBL_OK)
      return readInput(session, in, index);
    std::vector<float> values(product(in.shape(session, index)));
    check(fbl_safetensors_read_f32(baseFile, at, values.data(), values.size()));
    return values;
  };
  std::map<std::string, size_t> byName;
  for (size_t i : in.weights)
    byName[fbl_session_input_name(session, i)] = i;
  fbl_safetensors_writer *writer = nullptr;
  check(fbl_safetensors_writer_create(&writer));
  double scale = lora.alpha / double(lora.rank);
  for (auto &[name, index] : byName) {
    StringRef n(name);
    if (n.contains(".lora_A.") || n.contains(".lora_B."))
      continue;
    std::vector<int64_t> shape = in.shape(session, index);
    std::vector<float> w = baseValue(name, index);
    std::string prefix = n.drop_back(strlen(".weight")).str();
    auto a = byName.find(prefix + ".lora_A.weight");
    auto b = byName.find(prefix + ".lora_B.weight");
    if (n.ends_with(".weight") && a != byName.end() && b != byName.end()) {
      std::vector<float> av = readInput(session, in, a->second);
      std::vector<float> bv = readInput(session, in, b->second);
      int64_t out = shape[0], inDim = shape[1], r = lora.rank;
      for (int64_t o = 0; o < out; ++o)
        for (int64_t k = 0; k < inDim; ++k) {
          double acc = 0;
          for (int64_t j = 0; j < r; ++j)
            acc += double(bv[o * r + j]) * av[j * inDim + k];
          w[o * inDim + k] += float(scale * acc);
        }
    }
    check(fbl_safetensors_writer_add_f32(writer, name.c_str(), shape.data(),
                                         shape.size(), w.data(),
                                         dtype.str().c_str()));
  }
  check(fbl_safetensors_writer_add_metadata(writer, "format", "pt"));
  check(fbl_safetensors_writer_write(writer, path.c_str()));
  fbl_safetensors_writer_free(writer);
  if (baseFile)
    fbl_safetensors_close(baseFile);
}

/// BERT's masking of a batch for masked-LM training: each position is
/// picked with probability 15% (at least one per batch); a picked position's
/// label is its token, and its input becomes [MASK] (80%), a random token
/// (10%) or stays (10%). Other labels are kIgnoreIndex.
void maskTokens(std::mt19937_64 &rng, int64_t maskId, int64_t vocab,
                std::vector<int64_t> &ids, std::vector<int64_t> &labels) {
  labels.assign(ids.size(), models::kIgnoreIndex);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int64_t> token(0, vocab - 1);
  bool any = false;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (u(rng) >= 0.15)
      continue;
    any = true;
    labels[i] = ids[i];
    double r = u(rng);
    if (r < 0.8)
      ids[i] = maskId;
    else if (r < 0.9)
      ids[i] = token(rng);
  }
  if (!any) {
    size_t i = std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng);
    labels[i] = ids[i];
    ids[i] = maskId;
  }
}

std::string formatDuration(double seconds) {
  int64_t s = int64_t(std::llround(std::max(0.0, seconds)));
  if (s >= 3600)
    return formatv("{0}:{1:2}:{2:2}", s / 3600, (s / 60) % 60, s % 60);
  return formatv("{0}:{1:2}", s / 60, s % 60);
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "fbl-finetune: fine-tune a model on the local "
                              "OpenCL device\n");
  if (!printTokens && modelName.empty())
    die("--model is required (a preset or a config.json)");
  if (!printTokens && saveDir.empty())
    die("--save is required (the output folder)");
  if (numSteps < 1)
    die("--steps must be at least 1");
  if (batchSize < 1 || seqLen < 2)
    die("--batch must be at least 1 and --seq at least 2");
  if (!(learningRate > 0) || !std::isfinite(learningRate))
    die("--lr must be a positive number");
  if (checkpointEvery < 0)
    die("--checkpoint-every must be 0 or more");
  if (saveDtype != "F32" && saveDtype != "F16" && saveDtype != "BF16")
    die("--save-dtype must be F32, F16 or BF16");
  if (fullFinetune && !loraSpec.empty())
    die("--full and --lora exclude each other");
  if (fullFinetune && merge)
    die("--merge merges LoRA adapters; --full already trains the weights");
  if (policy != "fblayout" && policy != "reuse-forward" &&
      policy != "explicit-transpose")
    die("--policy must be fblayout, reuse-forward or explicit-transpose");
  if (!target.empty() && !isPlainName(target) &&
      !(StringRef(target).starts_with("#fbl.target<") &&
        StringRef(target).ends_with(">") &&
        StringRef(target).find_first_of("{}") == StringRef::npos))
    die("--target must be a preset name such as pocl-cpu or a "
        "#fbl.target<...> attribute, got '" +
        target + "'");

  // --print-tokens may go without a model: then no bos and no vocab_size.
  bool haveModel = !modelName.empty();
  std::string configText;
  models::ModelConfig config;
  if (haveModel) {
    configText = orDie(models::ModelConfig::loadText(modelName));
    config = orDie(models::ModelConfig::parse(configText, modelName));
  }
  // A classifier learns labelled examples (.npy), a language model text.
  bool classify =
      haveModel && (config.task == models::Task::SequenceClassification ||
                    config.task == models::Task::ImageClassification ||
                    config.task == models::Task::SpeechToText);
  // A diffusion UNet learns noised latents under their text context.
  bool diffusion = haveModel && config.isDiffusion();
  if (diffusion != !contextPath.empty())
    die(diffusion ? "'" + modelName +
                        "' is a diffusion UNet: give --data (an .npy of N "
                        "latents) and --context (an .npy of their N text "
                        "encoder hidden states)"
                  : "--context is for diffusion UNets; '" + modelName +
                        "' is not one");
  if (diffusion && !labelsPath.empty())
    die("--labels is for classifiers; a diffusion UNet reads --context");
  if (diffusion && printTokens)
    die("--print-tokens reads text; '" + modelName + "' is a diffusion UNet");
  if (classify && labelsPath.empty())
    die("'" + modelName + "' is " +
        std::string(config.isVision() ? "an " : "a ") +
        config.taskName().str() +
        " model: give --labels (an .npy of N integer labels) and --data "
        "(an .npy of N examples)");
  if (!classify && !diffusion && !labelsPath.empty())
    die("--labels is for classifiers; '" + modelName + "' learns " +
        config.taskName().str() + " from text");
  if (classify && printTokens)
    die("--print-tokens reads text; '" + modelName + "' is a classifier");
  std::optional<ClassData> examples;
  if (classify) {
    ClassData::Expect expect;
    expect.numLabels = config.numLabels;
    if (config.isSpeech()) {
      // Log-mel features and their transcripts as token ids.
      expect.isFloat = true;
      expect.shape = {config.numMelBins, 2 * config.maxSourcePositions};
      expect.labelShape = {-1};
      expect.numLabels = config.vocabSize;
    } else if (config.isVision()) {
      expect.isFloat = true;
      expect.shape = {config.numChannels, config.imageSize, config.imageSize};
    } else {
      expect.shape = {-1};
      expect.maxId = config.vocabSize;
    }
    examples = orDie(ClassData::load(dataPath, labelsPath, expect));
    if (config.isSpeech())
      seqLen = examples->labelsPerExample();
    else if (!config.isVision())
      seqLen = examples->exampleShape()[0];
  }
  bool fromText = !classify && !diffusion;
  std::optional<DiffusionData> latents;
  if (diffusion) {
    DiffusionData::Expect expect;
    expect.channels = config.inChannels;
    expect.size = config.sampleSize;
    expect.contextWidth = config.crossAttentionDim;
    if (config.inChannels != config.outChannels)
      die("'" + modelName +
          "' predicts other channels than it reads; "
          "noise prediction needs in_channels = out_channels");
    latents = orDie(DiffusionData::load(dataPath, contextPath, expect));
    seqLen = latents->contextLength();
  }
  // Masked-LM training replaces tokens by the model's [MASK].
  bool masked = haveModel && config.task == models::Task::MaskedLM;
  if (masked && !printTokens &&
      (config.maskTokenId < 0 || config.maskTokenId >= config.vocabSize))
    die("'" + modelName +
        "' has no mask_token_id in [0, vocab_size): masked-LM training "
        "needs the id of its [MASK] token in the config");
  if (haveModel && !printTokens && seqLen > config.maxPositions)
    die(formatv("--seq {0} exceeds the model's max_position_embeddings {1}",
                seqLen.getValue(), config.maxPositions));
  // The config's bos goes before each document (the file's own bos when its
  // post-processor names one).
  int64_t configBos = haveModel && config.bosTokenId >= 0 &&
                              config.bosTokenId < config.vocabSize
                          ? config.bosTokenId
                          : -1;

  // Byte-level tokens: the tiny presets' ids 0..255 are bytes; LLaMA-style
  // SentencePiece vocabularies hold the 256 byte-fallback tokens at 3..258.
  ByteTokenizer byteTokenizer;
  std::optional<TextData> text;
  std::unique_ptr<BpeTokenizer> bpe;
  int64_t bos = configBos;
  if (!tokenizerFile.empty()) {
    std::string error;
    bpe = BpeTokenizer::load(tokenizerFile, error);
    if (!bpe)
      die("--tokenizer '" + tokenizerFile + "': " + error);
    for (const std::string &warning : bpe->warnings())
      WithColor::warning(errs(), "fbl-finetune")
          << "--tokenizer '" << tokenizerFile << "': " << warning << "\n";
    if (haveModel && bpe->maxId() >= config.vocabSize)
      die(formatv("--tokenizer '{0}': token id {1} exceeds the model's "
                  "vocab_size {2}",
                  tokenizerFile, bpe->maxId(), config.vocabSize));
    if (configBos >= 0)
      bos = bpe->bosFromTemplate().value_or(configBos);
  } else if (haveModel && fromText) {
    byteTokenizer.byteBase = config.vocabSize >= 32000 ? 3 : 0;
    if (byteTokenizer.byteBase + 256 > config.vocabSize)
      die(formatv("the byte tokenizer needs 256 token ids but vocab_size is "
                  "{0}",
                  config.vocabSize));
  }
  byteTokenizer.bos = bos;
  std::string tokenizerName =
      bpe ? tokenizerFile.getValue() : std::string("byte-level");
  if (fromText)
    text = orDie(TextData::load(
        dataPath, [&](StringRef text, std::vector<int64_t> &ids) {
          if (!bpe) {
            std::vector<int64_t> bytes = byteTokenizer.encode(text);
            ids.insert(ids.end(), bytes.begin(), bytes.end());
            return;
          }
          if (bos >= 0)
            ids.push_back(bos);
          bpe->encode(std::string_view(text.data(), text.size()), ids);
        }));
  if (printTokens) {
    for (int64_t d = 0; d < text->numDocuments(); ++d) {
      ArrayRef<int64_t> ids = text->document(d);
      for (size_t i = 0; i < ids.size(); ++i)
        outs() << (i ? " " : "") << ids[i];
      outs() << "\n";
    }
    return 0;
  }
  if (text && text->numTokens() < 2)
    die("--data '" + dataPath + "' holds no text");

  if (std::error_code ec = sys::fs::create_directories(saveDir))
    die("cannot create '" + saveDir + "': " + ec.message());

  // Compile (or reuse) the training step for the device's target.
  StepOptions step;
  step.configText = configText;
  step.shape = {batchSize, seqLen};
  if (!fullFinetune)
    step.lora = parseLora(loraSpec, config.defaultLoraTargets());
  step.policy = policy;
  step.learningRate = learningRate;
  step.target = target;
  if (step.target.empty()) {
    char preset[128];
    check(fbl_target_preset(device.c_str(), preset, sizeof(preset)));
    step.target = preset;
  }
  step.cacheDir = cacheDir == "none" ? ""
                  : cacheDir.empty() ? defaultCacheDir()
                                     : cacheDir.getValue();
  std::string scratch =
      step.cacheDir.empty() ? saveDir.getValue() : step.cacheDir;
  if (!step.cacheDir.empty())
    (void)sys::fs::create_directories(step.cacheDir);
  outs() << formatv(
      "model {0}: {1} ({2}), {3} layers, hidden {4}, {5}, "
      "{6:N} parameters\n",
      modelName, config.familyName(), config.taskName(), config.numLayers,
      config.hiddenSize,
      diffusion           ? formatv("{0}x{0} latents", config.sampleSize).str()
      : config.isVision() ? formatv("{0} labels", config.numLabels).str()
                          : formatv("vocab {0}", config.vocabSize).str(),
      config.numParameters());
  if (latents) {
    outs() << formatv("data {0}: {1:N} latents of {2}x{3}x{3}, context {4} "
                      "({5} x {6})\n",
                      dataPath, latents->numExamples(), config.inChannels,
                      config.sampleSize, contextPath, latents->contextLength(),
                      config.crossAttentionDim);
  } else if (examples) {
    std::string shape;
    for (int64_t d : examples->exampleShape())
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    outs() << formatv("data {0}: {1:N} examples of {2} {3}, labels {4}\n",
                      dataPath, examples->numExamples(), shape,
                      config.isVision()   ? "pixels"
                      : config.isSpeech() ? "log-mel features"
                                          : "token ids",
                      labelsPath);
  } else {
    outs() << formatv("data {0}: {1:N} tokens from {2} file(s), {3}\n",
                      dataPath, text->numTokens(), text->numDocuments(),
                      bpe ? "bpe (" + tokenizerFile + ")"
                          : std::string("byte-level"));
  }
  outs().flush();
  CompiledStep compiled = orDie(compileStep(config, step, scratch, outs()));
  if (compiled.fromCache)
    outs() << "training step: from the cache (" << compiled.bundleDir << ")\n";
  else
    outs() << formatv("training step: compiled in {0:f1} s (policy {1}, "
                      "target {2})\n",
                      compiled.compileSeconds, policy, step.target);
  outs().flush();

  fbl_session *session = nullptr;
  check(fbl_session_open(compiled.bundleDir.c_str(), device.c_str(), &session));
  StepInputs in = findInputs(session);
  int64_t trainable = 0;
  for (size_t p : in.params)
    trainable += product(in.shape(session, p));

  // Initial values: each input's initializer, then the weights file.
  for (size_t i = 0; i < fbl_session_num_inputs(session); ++i)
    if (*fbl_session_input_init(session, i))
      check(fbl_session_init_input(session, i, seed));
  if (!weightsFile.empty()) {
    std::string report(1 << 20, '\0');
    check(fbl_session_load_weights(session, weightsFile.c_str(), 0,
                                   report.data(), report.size()));
    std::set<std::string> loaded;
    std::vector<std::string> unused;
    for (StringRef line : split(StringRef(report.c_str()), '\n')) {
      if (line.consume_front("loaded "))
        loaded.insert(line.str());
      else if (line.consume_front("unused "))
        unused.push_back(line.str());
    }
    // Adapters start from their initializers; every other weight must come
    // from the file.
    for (size_t i : in.weights) {
      StringRef name = fbl_session_input_name(session, i);
      if (!loaded.count(name.str()) && !name.contains(".lora_A.") &&
          !name.contains(".lora_B."))
        die("--weights '" + weightsFile + "' has no tensor '" + name + "'");
    }
    outs() << formatv("weights {0}: {1} tensors loaded", weightsFile,
                      loaded.size());
    if (!unused.empty())
      outs() << formatv(", {0} unused (e.g. '{1}')", unused.size(),
                        unused.front());
    outs() << "\n";
  } else {
    outs() << "weights: none given; every weight starts from its random "
              "initializer\n";
  }
  for (size_t i = 0; i < fbl_session_num_inputs(session); ++i)
    if (!in.isData(i) && !fbl_session_input_is_step_count(session, i) &&
        !fbl_session_input_is_set(session, i))
      die(formatv("input {0} ('{1}') has no value: give --weights", i,
                  fbl_session_input_name(session, i)));

  // Resume from the last checkpoint.
  std::string checkpointDir = pathIn(saveDir, "checkpoint");
  std::string checkpointWeights =
      pathIn(checkpointDir, "trainable.safetensors");
  std::string checkpointState = pathIn(checkpointDir, "state.json");
  TrainingLog log;
  int64_t firstStep = 1;
  if (resume && sys::fs::exists(checkpointState)) {
    auto text = MemoryBuffer::getFile(checkpointState);
    if (!text)
      die("cannot read '" + checkpointState + "'");
    Expected<json::Value> state = json::parse((*text)->getBuffer());
    std::optional<int64_t> done = state && state->getAsObject()
                                      ? state->getAsObject()->getInteger("step")
                                      : std::nullopt;
    if (!done || *done < 0)
      die("'" + checkpointState + "' is not a checkpoint state");
    check(fbl_session_load_weights(session, checkpointWeights.c_str(),
                                   FBL_WEIGHTS_STRICT, nullptr, 0));
    orDie(log.readCsv(pathIn(saveDir, "loss.csv")));
    while (!log.steps().empty() && log.steps().back().step > *done) {
      std::vector<StepRecord> kept(log.steps().begin(), log.steps().end() - 1);
      log = TrainingLog();
      for (const StepRecord &r : kept)
        log.add(r);
    }
    firstStep = *done + 1;
    outs() << formatv("resumed from step {0} ({1})\n", *done, checkpointDir);
  }

  outs() << formatv(
      "training {0}: {1:N} of {2:N} parameters trainable "
      "({3}), batch {4}{5}, AdamW lr {6}, device {7}, "
      "{8:f1} MiB of device memory\n",
      step.lora ? "LoRA adapters" : "all weights", trainable,
      config.numParameters(),
      step.lora ? formatv("rank {0}, alpha {1}, {2}", step.lora->rank,
                          format("%g", step.lora->alpha), step.lora->targets)
                      .str()
                : std::string("full fine-tuning"),
      batchSize,
      config.isVision() ? std::string()
      : diffusion       ? formatv(" x context {0}", seqLen.getValue()).str()
                        : formatv(" x seq {0}", seqLen.getValue()).str(),
      format("%g", learningRate.getValue()), fbl_session_device_name(session),
      fbl_session_device_bytes(session) / (1024.0 * 1024.0));
  outs().flush();

  auto saveCheckpoint = [&](int64_t done) {
    if (std::error_code ec = sys::fs::create_directories(checkpointDir))
      die("cannot create '" + checkpointDir + "': " + ec.message());
    check(fbl_session_save_weights(session, checkpointWeights.c_str(), "",
                                   FBL_WEIGHTS_OPTIMIZER_STATE, "F32"));
    orDie(
        writeJson(checkpointState, json::Object{{"step", done},
                                                {"model", modelName.getValue()},
                                                {"seed", int64_t(seed)}}));
    orDie(log.writeCsv(pathIn(saveDir, "loss.csv")));
  };

  int64_t every =
      logEvery > 0 ? logEvery.getValue() : std::max<int64_t>(1, numSteps / 20);
  std::vector<int64_t> ids, labels;
  std::vector<uint8_t> batchBytes;
  // Throughput counts tokens of text, or examples of a classifier.
  // (a speech model's: its transcripts' tokens)
  bool perSample = (examples && !config.isSpeech()) || latents;
  int64_t unitsPerStep = perSample ? batchSize.getValue() : batchSize * seqLen;
  StringRef unit = perSample ? "samples" : "tokens";
  double elapsed = 0;
  // One segment and no padding: every window is text.
  if (in.tokenTypes) {
    std::vector<int64_t> zeros(size_t(batchSize * seqLen), 0);
    check(fbl_session_set_input(session, *in.tokenTypes, zeros.data(),
                                zeros.size() * sizeof(int64_t)));
  }
  if (in.attentionMask) {
    std::vector<int64_t> ones(size_t(batchSize * seqLen), 1);
    check(fbl_session_set_input(session, *in.attentionMask, ones.data(),
                                ones.size() * sizeof(int64_t)));
  }
  int64_t timedSteps = 0;
  DiffusionData::Batch noised;
  for (int64_t s = firstStep; s <= numSteps; ++s) {
    // The batch of step s depends only on the seed and s, so a resumed run
    // sees the batches an uninterrupted one would have.
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + uint64_t(s));
    auto start = std::chrono::steady_clock::now();
    if (latents) {
      latents->sample(rng, batchSize, noised);
      auto set = [&](size_t index, const auto &values) {
        check(fbl_session_set_input(session, index, values.data(),
                                    values.size() * sizeof(values[0])));
      };
      set(in.ids, noised.sample);
      set(*in.timesteps, noised.timesteps);
      set(*in.context, noised.context);
      set(in.labels, noised.noise);
    } else if (examples) {
      examples->sample(rng, batchSize, batchBytes, labels);
      check(fbl_session_set_input(session, in.ids, batchBytes.data(),
                                  batchBytes.size()));
      if (in.attentionMask) {
        // Padding (the config's pad_token_id) is not attended to.
        std::vector<int64_t> mask(batchBytes.size() / sizeof(int64_t));
        for (size_t i = 0; i < mask.size(); ++i) {
          int64_t id;
          std::memcpy(&id, batchBytes.data() + i * sizeof(int64_t), sizeof(id));
          mask[i] = id != config.padTokenId;
        }
        check(fbl_session_set_input(session, *in.attentionMask, mask.data(),
                                    mask.size() * sizeof(int64_t)));
      }
      if (in.decoderIds) {
        // Each transcript behind the decoder's start token, -100 read as
        // padding: what the decoder reads to predict the labels.
        std::vector<int64_t> shifted(labels.size());
        int64_t per = examples->labelsPerExample();
        for (size_t i = 0; i < labels.size(); ++i) {
          int64_t prev =
              i % per == 0 ? config.decoderStartTokenId : labels[i - 1];
          shifted[i] = prev == models::kIgnoreIndex ? config.padTokenId : prev;
        }
        check(fbl_session_set_input(session, *in.decoderIds, shifted.data(),
                                    shifted.size() * sizeof(int64_t)));
      }
    } else {
      text->sample(rng, batchSize, seqLen, ids);
      if (masked)
        maskTokens(rng, config.maskTokenId, config.vocabSize, ids, labels);
      else
        labels = ids;
      check(fbl_session_set_input(session, in.ids, ids.data(),
                                  ids.size() * sizeof(int64_t)));
    }
    if (!latents)
      check(fbl_session_set_input(session, in.labels, labels.data(),
                                  labels.size() * sizeof(int64_t)));
    check(fbl_session_train_step(session, s, 0));
    float loss = 0;
    check(fbl_session_get_output(session, 0, &loss, sizeof(loss)));
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (s > firstStep) {
      elapsed += ms;
      ++timedSteps;
    }
    log.add({s, loss, ms, unitsPerStep / (ms / 1000.0)});
    if (s == firstStep) {
      // The first step also builds the OpenCL program (or loads it from
      // the driver's cache) and uploads every input.
      outs() << formatv("step {0,5}/{1}  loss {2:f4}  (first step, with "
                        "program build and uploads: {3:f1} s)\n",
                        s, numSteps, loss, ms / 1000.0);
      outs().flush();
    } else if (s % every == 0 || s == numSteps) {
      double meanMs = elapsed / timedSteps;
      outs() << formatv("step {0,5}/{1}  loss {2:f4}  {3,8:f0} {4}/s  "
                        "{5,8:f1} ms/step  ETA {6}\n",
                        s, numSteps, loss, unitsPerStep / (meanMs / 1000.0),
                        unit, meanMs,
                        formatDuration((numSteps - s) * meanMs / 1000.0));
      outs().flush();
    }
    if (checkpointEvery > 0 && s % checkpointEvery == 0 && s < numSteps)
      saveCheckpoint(s);
  }
  saveCheckpoint(numSteps);

  // Results.
  json::Array written;
  std::string tmpAll = pathIn(saveDir, ".trained.safetensors");
  check(fbl_session_save_weights(session, tmpAll.c_str(), "", 0, "F32"));
  if (step.lora) {
    // PEFT's names and config, so PEFT (and tools reading its format) load
    // the adapters.
    rewriteSafetensors(
        tmpAll, pathIn(saveDir, "adapter_model.safetensors"),
        [](StringRef name) { return "base_model.model." + name.str(); },
        saveDtype);
    json::Array targets;
    for (StringRef t : split(step.lora->targets, ','))
      targets.push_back(t.str());
    orDie(writeJson(pathIn(saveDir, "adapter_config.json"),
                    json::Object{{"peft_type", "LORA"},
                                 {"task_type", peftTaskType(config.task)},
                                 {"base_model_name_or_path", modelName},
                                 {"r", step.lora->rank},
                                 {"lora_alpha", step.lora->alpha},
                                 {"lora_dropout", 0.0},
                                 {"target_modules", std::move(targets)},
                                 {"bias", "none"},
                                 {"fan_in_fan_out", false},
                                 {"inference_mode", true}}));
    written.push_back("adapter_model.safetensors");
    written.push_back("adapter_config.json");
    if (merge) {
      writeMerged(session, in, *step.lora, pathIn(saveDir, "model.safetensors"),
                  saveDtype, weightsFile);
      written.push_back("model.safetensors");
    }
  } else {
    rewriteSafetensors(
        tmpAll, pathIn(saveDir, "model.safetensors"),
        [](StringRef name) { return name.str(); }, saveDtype);
    written.push_back("model.safetensors");
  }
  sys::fs::remove(tmpAll);
  if (!step.lora || merge) {
    orDie(writeFileAtomically(pathIn(saveDir, "config.json"), configText));
    written.push_back("config.json");
  }
  orDie(log.writeSvg(
      pathIn(saveDir, "loss.svg"),
      formatv("{0} {1}: training loss", modelName, step.lora ? "LoRA" : "full")
          .str()));
  written.push_back("loss.csv");
  written.push_back("loss.svg");
  written.push_back("summary.json");

  const std::vector<StepRecord> &records = log.steps();
  double firstLoss = records.front().loss, lastLoss = records.back().loss;
  double minLoss = firstLoss;
  for (const StepRecord &r : records)
    minLoss = std::min(minLoss, r.loss);
  double medianMs = log.medianMilliseconds();
  json::Object summary{
      {"model", modelName.getValue()},
      {"family", config.familyName()},
      {"task", config.taskName()},
      {"parameters", config.numParameters()},
      {"trainable_parameters", trainable},
      {"mode", step.lora ? "lora" : "full"},
      {"steps", numSteps.getValue()},
      {"batch", batchSize.getValue()},
      {"seq", seqLen.getValue()},
      {"learning_rate", learningRate.getValue()},
      {"policy", policy.getValue()},
      {"tokenizer", examples ? std::string("none") : tokenizerName},
      {"target", step.target},
      {"device", fbl_session_device_name(session)},
      {"device_bytes", fbl_session_device_bytes(session)},
      {"compile_seconds", compiled.compileSeconds},
      {"compiled_from_cache", compiled.fromCache},
      {"first_loss", firstLoss},
      {"final_loss", lastLoss},
      {"min_loss", minLoss},
      {"median_step_ms", medianMs},
      {(unit + "_per_second").str(),
       medianMs > 0 ? unitsPerStep / (medianMs / 1000.0) : 0.0},
      {"outputs", std::move(written)}};
  if (examples)
    summary["data_examples"] = examples->numExamples();
  else if (latents)
    summary["data_examples"] = latents->numExamples();
  else
    summary["data_tokens"] = text->numTokens();
  if (step.lora)
    summary["lora"] = json::Object{{"rank", step.lora->rank},
                                   {"alpha", step.lora->alpha},
                                   {"targets", step.lora->targets}};
  orDie(writeJson(pathIn(saveDir, "summary.json"), std::move(summary)));
  outs() << formatv("trained {0} steps: loss {1:f4} -> {2:f4}, median step "
                    "{3:f1} ms; wrote {4}\n",
                    numSteps, firstLoss, lastLoss, medianMs, saveDir);
  fbl_session_close(session);
  return 0;
}
