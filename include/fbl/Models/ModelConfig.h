//===- ModelConfig.h - Hugging Face-style model configurations --*- C++ -*-===//
//
// The fields of a Hugging Face `config.json` that decide a model's training
// graph (decoder LLMs and BERT-style encoders), read once here for every
// builder and tool. Presets are the published configs of real models plus a
// `tiny` model of each family; they are compiled into the library, so no
// file or network access is needed.
//
//===----------------------------------------------------------------------===//

#ifndef FBL_MODELS_MODELCONFIG_H
#define FBL_MODELS_MODELCONFIG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fbl::models {

/// The families the builder knows, by `model_type`.
enum class Family { Llama, Qwen2, Gemma, Bert, Vit, Whisper, UNet };

/// What the model is trained to predict, from the config's
/// `architectures` (e.g. `BertForMaskedLM`); tools may override it.
enum class Task {
  CausalLM,               ///< next-token cross-entropy (decoders)
  MaskedLM,               ///< cross-entropy at the labelled positions
  SequenceClassification, ///< one label per sequence, from the first token
  ImageClassification,    ///< one label per image, from the class token
  SpeechToText, ///< token cross-entropy of a decoder reading an audio encoder
  NoisePrediction, ///< MSE of a diffusion UNet's predicted noise
};

/// Feed-forward activations (`hidden_act` / `hidden_activation`).
enum class Activation { SiLU, GeluTanh, GeluErf };

/// LLaMA-3's frequency-dependent RoPE scaling (`rope_scaling.rope_type =
/// "llama3"`).
struct Llama3RopeScaling {
  double factor = 8.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int64_t originalMaxPositions = 8192;
};

struct ModelConfig {
  Family family = Family::Llama;
  std::string modelType; ///< as written in the file
  int64_t hiddenSize = 0;
  int64_t intermediateSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  int64_t numKeyValueHeads = 0;
  int64_t headDim = 0;
  int64_t vocabSize = 0;
  int64_t maxPositions = 0;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  std::optional<Llama3RopeScaling> llama3Rope;
  Activation activation = Activation::SiLU;
  bool tieWordEmbeddings = false;
  bool attentionBias = false; ///< q/k/v (and o for LLaMA) projections
  bool outputProjectionBias = false;
  bool mlpBias = false;
  double initializerRange = 0.02;
  int64_t bosTokenId = -1;
  int64_t eosTokenId = -1;
  Task task = Task::CausalLM;
  // Encoders (BERT).
  int64_t typeVocabSize = 0; ///< token types (segments)
  double layerNormEps = 1e-12;
  int64_t numLabels = 2; ///< classes of a classifier
  int64_t padTokenId = -1;
  int64_t maskTokenId = -1; ///< [MASK]: masked-LM training on raw text
  // Vision transformers (ViT).
  int64_t imageSize = 0, patchSize = 0, numChannels = 3;
  bool qkvBias = true;
  // Speech encoder-decoders (Whisper): numLayers and maxPositions are the
  // decoder's; the encoder reads 2 * maxSourcePositions frames of
  // numMelBins.
  int64_t numEncoderLayers = 0, numMelBins = 0, maxSourcePositions = 0;
  int64_t decoderStartTokenId = -1;
  // Diffusion UNets (diffusers' UNet2DConditionModel, `_class_name`): one
  // entry per resolution level in `blockOutChannels`, `unetHeads` and
  // `crossAttentionBlocks` (whether its down and up blocks carry spatial
  // transformers, the up blocks' in reverse); the training shape's seq is
  // the text context's length.
  std::vector<int64_t> blockOutChannels, unetHeads;
  std::vector<bool> crossAttentionBlocks;
  int64_t inChannels = 4, outChannels = 4, sampleSize = 64;
  int64_t layersPerBlock = 2, crossAttentionDim = 768, normGroups = 32;
  double normEps = 1e-5;
  bool flipSinToCos = true;
  double freqShift = 0.0;

  /// Encoders attend both ways and train no causal LM.
  bool isEncoder() const {
    return family == Family::Bert || family == Family::Vit;
  }
  bool isSpeech() const { return family == Family::Whisper; }
  bool isVision() const { return family == Family::Vit; }
  bool isDiffusion() const { return family == Family::UNet; }
  /// Patches of an image (ViT), its class token excluded.
  int64_t numPatches() const {
    return isVision() ? (imageSize / patchSize) * (imageSize / patchSize) : 0;
  }

  /// Parses a `config.json` text; `origin` names it in errors.
  static llvm::Expected<ModelConfig> parse(llvm::StringRef json,
                                           llvm::StringRef origin);
  /// A preset by name (see presetNames()) or a path to a config.json.
  static llvm::Expected<ModelConfig> load(llvm::StringRef presetOrPath);
  /// The config.json text of a preset or file.
  static llvm::Expected<std::string> loadText(llvm::StringRef presetOrPath);

  /// Number of parameters of the model (embeddings counted once when tied).
  int64_t numParameters() const;
  llvm::StringRef familyName() const;
  llvm::StringRef taskName() const;
  /// The modules LoRA adapts unless told otherwise, as PEFT's defaults per
  /// model type: the query and value projections; for a diffusion UNet
  /// those of diffusers' SD LoRA scripts, every attention projection.
  llvm::StringRef defaultLoraTargets() const {
    if (isDiffusion())
      return "to_k,to_q,to_v,to_out.0";
    return isEncoder() ? "query,value" : "q_proj,v_proj";
  }
};

/// Parses a task name as tools take it: causal-lm, masked-lm,
/// classification.
std::optional<Task> parseTask(llvm::StringRef name);

/// Names accepted by ModelConfig::load besides paths, e.g. "tinyllama",
/// "llama-3.2-1b", "tiny-llama".
llvm::ArrayRef<llvm::StringRef> presetNames();

} // namespace fbl::models

#endif // FBL_MODELS_MODELCONFIG_H
