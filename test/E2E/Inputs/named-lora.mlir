// A two-layer classifier in the shared model conventions: Hugging Face
// tensor names on every argument (fbl.name), linear layers y = x·Wᵀ with W
// stored OUT x IN and transposed by linalg.transpose, a frozen base weight
// with a LoRA adapter beside it (A uniform, B zeros: fbl.init), and softmax
// cross-entropy over integer labels.

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func @classifier(
    %x: tensor<4x6xf32> {fbl.name = "inputs_embeds"},
    %labels: tensor<4xi64> {fbl.name = "labels"},
    %w1: tensor<8x6xf32> {fbl.name = "model.fc1.weight"},
    %b1: tensor<8xf32> {fbl.param, fbl.name = "model.fc1.bias", fbl.init = "zeros"},
    %lora_a: tensor<2x6xf32> {fbl.param, fbl.name = "model.fc1.lora_A.weight", fbl.init = "uniform:0.25"},
    %lora_b: tensor<8x2xf32> {fbl.param, fbl.name = "model.fc1.lora_B.weight", fbl.init = "zeros"},
    %w2: tensor<5x8xf32> {fbl.param, fbl.name = "lm_head.weight"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_n = arith.constant 0.25 : f32
  // base = x · W1ᵀ
  %w1te = tensor.empty() : tensor<6x8xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<8x6xf32>) outs(%w1te : tensor<6x8xf32>) permutation = [1, 0]
  %he = tensor.empty() : tensor<4x8xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<4x8xf32>) -> tensor<4x8xf32>
  %base = linalg.matmul ins(%x, %w1t : tensor<4x6xf32>, tensor<6x8xf32>) outs(%hz : tensor<4x8xf32>) -> tensor<4x8xf32>
  // lora = (x · Aᵀ) · Bᵀ
  %ate = tensor.empty() : tensor<6x2xf32>
  %at = linalg.transpose ins(%lora_a : tensor<2x6xf32>) outs(%ate : tensor<6x2xf32>) permutation = [1, 0]
  %ue = tensor.empty() : tensor<4x2xf32>
  %uz = linalg.fill ins(%zero : f32) outs(%ue : tensor<4x2xf32>) -> tensor<4x2xf32>
  %u = linalg.matmul ins(%x, %at : tensor<4x6xf32>, tensor<6x2xf32>) outs(%uz : tensor<4x2xf32>) -> tensor<4x2xf32>
  %bte = tensor.empty() : tensor<2x8xf32>
  %bt = linalg.transpose ins(%lora_b : tensor<8x2xf32>) outs(%bte : tensor<2x8xf32>) permutation = [1, 0]
  %lora = linalg.matmul ins(%u, %bt : tensor<4x2xf32>, tensor<2x8xf32>) outs(%hz : tensor<4x8xf32>) -> tensor<4x8xf32>
  // a = gelu(base + lora + b1)
  %a = linalg.generic {indexing_maps = [#id, #id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%base, %lora, %b1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%he : tensor<4x8xf32>) {
  ^bb0(%v: f32, %l: f32, %b: f32, %o: f32):
    %vl = arith.addf %v, %l : f32
    %h = arith.addf %vl, %b : f32
    %s = arith.mulf %h, %rsqrt2 : f32
    %e = math.erf %s : f32
    %p = arith.addf %e, %one : f32
    %hh = arith.mulf %h, %half : f32
    %g = arith.mulf %hh, %p : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  // z = a · W2ᵀ
  %w2te = tensor.empty() : tensor<8x5xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<5x8xf32>) outs(%w2te : tensor<8x5xf32>) permutation = [1, 0]
  %ze = tensor.empty() : tensor<4x5xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ze : tensor<4x5xf32>) -> tensor<4x5xf32>
  %z = linalg.matmul ins(%a, %w2t : tensor<4x8xf32>, tensor<8x5xf32>) outs(%zz : tensor<4x5xf32>) -> tensor<4x5xf32>
  // cross-entropy: mean_i(logsumexp(z_i) - z_i[label_i])
  %re = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<4x5xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %se = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%z, %m : tensor<4x5xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf32>) {
  ^bb0(%v: f32, %mx: f32, %acc: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %nll = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
      ins(%se, %m, %labels : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) outs(%re : tensor<4xf32>) {
  ^bb0(%s: f32, %mx: f32, %lab: i64, %o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %lab : i64 to index
    %zl = tensor.extract %z[%i, %c] : tensor<4x5xf32>
    %l = math.log %s : f32
    %lse = arith.addf %l, %mx : f32
    %r = arith.subf %lse, %zl : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%nll : tensor<4xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %w = arith.mulf %v, %inv_n : f32
    %r = arith.addf %acc, %w : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
