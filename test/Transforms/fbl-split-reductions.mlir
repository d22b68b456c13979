// RUN: fbl-opt %s -split-input-file -fbl-split-reductions | FileCheck %s
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions=min-elements=100000 | FileCheck %s --check-prefix=KEEP
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions=min-row-length=10000 | FileCheck %s --check-prefix=SHORT
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions=min-partial-row-length=4096 | FileCheck %s --check-prefix=ROWS
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions=min-modelled-row-length=10000 | FileCheck %s --check-prefix=UNMODELLED
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions -mlir-print-local-scope | FileCheck %s --check-prefix=MAPS

// A mean-square loss over 64x32: partial sums along rows (parallel), then
// their sum added to the init.
// CHECK-LABEL: func.func @loss
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<64xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<64x32xf32>) outs(%[[F]] : tensor<64xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<64xf32>) outs(%arg1 : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[T]]
// KEEP-LABEL: func.func @loss
// KEEP: iterator_types = ["reduction", "reduction"]
// KEEP-NOT: linalg.generic
func.func @loss(%x: tensor<64x32xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A loss over 128x2048: the partial stage's 128 rows of 2048 would each be
// one long walk, so they are split as long rows are (32 chunks of 64 from
// min-partial-row-length 512): chunks, then rows, then the scalar.
// CHECK-LABEL: func.func @wide_loss
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [128, 32, 64] {fbl.reduction_chunks} : tensor<128x2048xf32> into tensor<128x32x64xf32>
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[X]] : tensor<128x32x64xf32>) outs(%{{.*}} : tensor<128x32xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[C]] : tensor<128x32xf32>) outs(%{{.*}} : tensor<128xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[R]] : tensor<128xf32>) outs(%arg1 : tensor<f32>)
// CHECK: return %[[T]]
// KEEP-LABEL: func.func @wide_loss
// ROWS-LABEL: func.func @wide_loss
// ROWS-NOT: tensor.expand_shape
// ROWS: iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<128x2048xf32>)
func.func @wide_loss(%x: tensor<128x2048xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<128x2048xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A max: the partials start from -inf.
// CHECK-LABEL: func.func @max
// KEEP-LABEL: func.func @max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
func.func @max(%x: tensor<64x32xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Not split: the body reads the accumulator twice (no single combiner).
// CHECK-LABEL: func.func @not_a_combiner
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK-NOT: linalg.generic
func.func @not_a_combiner(%x: tensor<64x32xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.mulf %acc, %acc : f32
    %r = arith.addf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Not split: a row reduction already runs in parallel.
// CHECK-LABEL: func.func @rows
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: linalg.generic
func.func @rows(%x: tensor<64x32xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %l : tensor<64xf32>
}

// -----

// A row maximum of 8 rows over a 9600-wide vocabulary: each row would be one
// work-item walking 9600 elements. Chunks of 9600 / 96 = 100 (96 the
// largest divisor up to sqrt(9600) leaving a multiple of 4): partial maxima
// per row and chunk from -inf, then the chunks' maximum into the init.
// CHECK-LABEL: func.func @row_max
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [8, 96, 100] {fbl.reduction_chunks} : tensor<8x9600xf32> into tensor<8x96x100xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[F:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<8x96xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[$IN3:.+]], #[[$OUT3:.+]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<8x96x100xf32>) outs(%[[F]] : tensor<8x96xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[P]] : tensor<8x96xf32>) outs(%arg1 : tensor<8xf32>)
// CHECK: arith.maximumf
// CHECK: return %[[T]]
// KEEP-LABEL: func.func @row_max
// KEEP: tensor.expand_shape
// SHORT-LABEL: func.func @row_max
// SHORT-NOT: tensor.expand_shape
func.func @row_max(%x: tensor<8x9600xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x9600xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

// The row loop's index in the body (a label compare, as a cross-entropy
// picks its target logit) becomes chunk * 100 + offset; inputs the row
// loop does not index stay as they are.
// CHECK-LABEL: func.func @picked
// CHECK: tensor.expand_shape %arg0
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<8x96x100xf32>, tensor<8xindex>)
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[O:.*]] = linalg.index 2 : index
// CHECK: %[[W:.*]] = arith.constant 100 : index
// CHECK: %[[M:.*]] = arith.muli %[[C]], %[[W]] : index
// CHECK: %[[J:.*]] = arith.addi %[[M]], %[[O]] : index
// CHECK: arith.cmpi eq, %[[J]],
func.func @picked(%x: tensor<8x9600xf32>, %labels: tensor<8xindex>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %labels : tensor<8x9600xf32>, tensor<8xindex>) outs(%init : tensor<8xf32>) {
  ^bb0(%v: f32, %l: index, %acc: f32):
    %j = linalg.index 1 : index
    %hit = arith.cmpi eq, %j, %l : index
    %s = arith.select %hit, %v, %zero : f32
    %r = arith.addf %acc, %s : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

// A GroupNorm's sums (torch-mlir's form: [N, G, C/G, H, W] reduced over
// the last three dims into a keepdim [N, G, 1, 1, 1]): 8 rows of 8192 each
// would be 8 walks. The outer reduction loops (8 x 32, balancing 256
// partial sums per row against 32-long walks) become parallel; the
// partial drops the keepdim's unit dims and a second stage sums them.
// CHECK-DAG: #[[$PART:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$UNIT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0, 0)>
// CHECK-LABEL: func.func @group_sums
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x8x32xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$PART]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x4x8x32x32xf32>) outs(%[[F]] : tensor<2x4x8x32xf32>)
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[$UNIT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[P]] : tensor<2x4x8x32xf32>) outs(%arg1 : tensor<2x4x1x1x1xf32>)
// CHECK: return %[[T]]
// SHORT-LABEL: func.func @group_sums
// SHORT: iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]
// SHORT-NOT: linalg.generic
func.func @group_sums(%x: tensor<2x4x8x32x32xf32>, %init: tensor<2x4x1x1x1xf32>) -> tensor<2x4x1x1x1xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(n, g, c, h, w) -> (n, g, c, h, w)>,
                                        affine_map<(n, g, c, h, w) -> (n, g, 0, 0, 0)>],
                       iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x : tensor<2x4x8x32x32xf32>) outs(%init : tensor<2x4x1x1x1xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1x1x1xf32>
  return %s : tensor<2x4x1x1x1xf32>
}

// -----

// A convolution's bias gradient, the channel loop between the batch and the
// spatial loops: partial sums per channel, image and row.
// CHECK-LABEL: func.func @bias_gradient
// SHORT-LABEL: func.func @bias_gradient
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0 : tensor<2x8x32x32xf32>) outs(%{{.*}} : tensor<8x2x32xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[P]] : tensor<8x2x32xf32>) outs(%arg1 : tensor<8xf32>)
func.func @bias_gradient(%dy: tensor<2x8x32x32xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                                        affine_map<(n, c, h, w) -> (c)>],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : tensor<2x8x32x32xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// Not split: the outer reduction loop is a unit loop (nothing to balance).
// CHECK-LABEL: func.func @unit_outer
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-NOT: linalg.generic
func.func @unit_outer(%x: tensor<4x1x4096xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>,
                                        affine_map<(i, j, k) -> (i)>],
                       iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<4x1x4096xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A LoRA weight gradient: 8 x 768 outputs (more than max-rows) summed over
// 6304 tokens. On a module with a target the cost model decides: on the
// H200 one stage would be a few hundred work-items each walking every token,
// and 197 chunks of 32 tokens model fastest.
// CHECK-LABEL: func.func @thin_gradient_h200
// CHECK-DAG: tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [197, 32, 8] {fbl.reduction_chunks}
// CHECK-DAG: tensor.expand_shape %arg1 {{\[}}[0, 1], [2]] output_shape [197, 32, 768] {fbl.reduction_chunks}
// A contraction's partial has the chunk dim first (a batched GEMM: split-K);
// the second stage reads it through the permutation.
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<197x8x768xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[P]] : tensor<197x8x768xf32>) outs(%arg2 : tensor<8x768xf32>)
// The partial stage reads each chunk's rows, writes [chunk, r, c]; the
// second stage reads that back as (r, c, chunk).
// MAPS-LABEL: func.func @thin_gradient_h200
// MAPS: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// MAPS: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// UNMODELLED-LABEL: func.func @thin_gradient_h200
// UNMODELLED-NOT: tensor.expand_shape
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
func.func @thin_gradient_h200(%dh: tensor<6304x8xf32>, %x: tensor<6304x768xf32>, %init: tensor<8x768xf32>) -> tensor<8x768xf32> {
  %g = linalg.generic {indexing_maps = [affine_map<(t, r, c) -> (t, r)>,
                                        affine_map<(t, r, c) -> (t, c)>,
                                        affine_map<(t, r, c) -> (r, c)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%dh, %x : tensor<6304x8xf32>, tensor<6304x768xf32>) outs(%init : tensor<8x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x768xf32>
  return %g : tensor<8x768xf32>
}
}

// -----

// ViT-B/16's attention weight gradient, 768x768 summed over 6304 tokens, on
// the H200: in 2 chunks the split-K GEMM is 288 work-groups of 64x64 for
// 132 SMs, and the last wave (a third group on some SMs) ends it; the model
// picks 8 chunks of 788 (1152 groups), which ran 1.5x faster there.
// CHECK-LABEL: func.func @square_gradient_h200
// CHECK: tensor.expand_shape %arg0 {{.*}} into tensor<8x788x768xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8x768x768xf32>)
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
func.func @square_gradient_h200(%x: tensor<6304x768xf32>, %dy: tensor<6304x768xf32>, %init: tensor<768x768xf32>) -> tensor<768x768xf32> {
  %g = linalg.generic {indexing_maps = [affine_map<(i, j, t) -> (t, i)>,
                                        affine_map<(i, j, t) -> (t, j)>,
                                        affine_map<(i, j, t) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<6304x768xf32>, tensor<6304x768xf32>) outs(%init : tensor<768x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<768x768xf32>
  return %g : tensor<768x768xf32>
}
}

// -----

// The same gradient for pocl-cpu: its work-items wait on no memory latency
// worth hiding, so a second stage only adds work and one stage stays.
// CHECK-LABEL: func.func @thin_gradient_pocl
// CHECK-NOT: tensor.expand_shape
// CHECK: iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-NOT: linalg.generic
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
func.func @thin_gradient_pocl(%dh: tensor<6304x8xf32>, %x: tensor<6304x768xf32>, %init: tensor<8x768xf32>) -> tensor<8x768xf32> {
  %g = linalg.generic {indexing_maps = [affine_map<(t, r, c) -> (t, r)>,
                                        affine_map<(t, r, c) -> (t, c)>,
                                        affine_map<(t, r, c) -> (r, c)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%dh, %x : tensor<6304x8xf32>, tensor<6304x768xf32>) outs(%init : tensor<8x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x768xf32>
  return %g : tensor<8x768xf32>
}
}

// -----

// Without a target there is no model to ask: more rows than max-rows stay
// one stage.
// CHECK-LABEL: func.func @thin_gradient_no_target
// CHECK-NOT: tensor.expand_shape
// CHECK: iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-NOT: linalg.generic
func.func @thin_gradient_no_target(%dh: tensor<6304x8xf32>, %x: tensor<6304x768xf32>, %init: tensor<8x768xf32>) -> tensor<8x768xf32> {
  %g = linalg.generic {indexing_maps = [affine_map<(t, r, c) -> (t, r)>,
                                        affine_map<(t, r, c) -> (t, c)>,
                                        affine_map<(t, r, c) -> (r, c)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%dh, %x : tensor<6304x8xf32>, tensor<6304x768xf32>) outs(%init : tensor<8x768xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x768xf32>
  return %g : tensor<8x768xf32>
}

// -----

// A LoRA adapter's forward product, a named linalg.matmul: 512 x 8 outputs
// over 640, rows shorter than min-row-length. The model is asked (from
// min-modelled-row-length, 256), on a generic clone, and splits it into 32
// chunks of 20: the op becomes its generic form, split. Where the model is
// not asked (UNMODELLED) the named op stays as it is.
// CHECK-LABEL: func.func @thin_product_h200
// CHECK-NOT: linalg.matmul
// CHECK-DAG: tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [512, 32, 20] {fbl.reduction_chunks}
// CHECK-DAG: tensor.expand_shape %arg1 {{\[}}[0, 1], [2]] output_shape [32, 20, 8] {fbl.reduction_chunks}
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<32x512x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<32x512x8xf32>) outs(%{{.*}} : tensor<512x8xf32>)
// CHECK-NOT: linalg.matmul
// UNMODELLED-LABEL: func.func @thin_product_h200
// UNMODELLED: linalg.matmul
// UNMODELLED-NOT: linalg.generic
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
func.func @thin_product_h200(%x: tensor<512x640xf32>, %a: tensor<640x8xf32>) -> tensor<512x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x8xf32>) -> tensor<512x8xf32>
  %m = linalg.matmul ins(%x, %a : tensor<512x640xf32>, tensor<640x8xf32>) outs(%f : tensor<512x8xf32>) -> tensor<512x8xf32>
  return %m : tensor<512x8xf32>
}
}

// -----

// The same product on pocl-cpu: the model keeps one stage, and the named op
// is left as it was (the generic clone it was asked about is gone).
// CHECK-LABEL: func.func @thin_product_pocl
// UNMODELLED-LABEL: func.func @thin_product_pocl
// CHECK: linalg.matmul
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.expand_shape
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
func.func @thin_product_pocl(%x: tensor<512x640xf32>, %a: tensor<640x8xf32>) -> tensor<512x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x8xf32>) -> tensor<512x8xf32>
  %m = linalg.matmul ins(%x, %a : tensor<512x640xf32>, tensor<640x8xf32>) outs(%f : tensor<512x8xf32>) -> tensor<512x8xf32>
  return %m : tensor<512x8xf32>
}
}
// -----

// A LayerNorm weight gradient: 768 columns summed over 6304 tokens, few
// enough rows for the fixed rule. Without a target the chunk count is the
// largest whole-texel divisor up to sqrt(6304): 8 chunks of 788.
// CHECK-LABEL: func.func @column_sum_no_target
// CHECK: tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [8, 788, 768] {fbl.reduction_chunks}
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<768x8xf32>)
func.func @column_sum_no_target(%x: tensor<6304x768xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>,
                                        affine_map<(t, c) -> (c)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<6304x768xf32>) outs(%init : tensor<768xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<768xf32>
  return %s : tensor<768xf32>
}

// -----

// The same sum on the H200: the rows split by the fixed rule, into the
// chunk count the model finds fastest (197 chunks of 32: 8 chunks left
// 1536 work-items walking 788 tokens each).
// CHECK-LABEL: func.func @column_sum_h200
// CHECK: tensor.expand_shape %arg0 {{\[}}[0, 1], [2]] output_shape [197, 32, 768] {fbl.reduction_chunks}
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<768x197xf32>)
// UNMODELLED-LABEL: func.func @column_sum_h200
// UNMODELLED: output_shape [197, 32, 768]
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
func.func @column_sum_h200(%x: tensor<6304x768xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(t, c) -> (t, c)>,
                                        affine_map<(t, c) -> (c)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<6304x768xf32>) outs(%init : tensor<768xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<768xf32>
  return %s : tensor<768xf32>
}
}

// -----

// A bias gradient over [N, H, W] = [2, 16, 16] for 640 channels: 512
// iterations, below min-row-length. On the H200 the model is asked (from
// min-modelled-row-length) and moves the outer reduction loops it finds
// fastest into a partial stage (N and H: 640 x 2 x 16 partial sums of 16);
// unmodelled, one stage stays.
// CHECK-LABEL: func.func @short_bias_gradient_h200
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<640x2x16xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%[[P]] : tensor<640x2x16xf32>) outs(%arg1 : tensor<640xf32>)
// UNMODELLED-LABEL: func.func @short_bias_gradient_h200
// UNMODELLED: iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// UNMODELLED-NOT: linalg.generic
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
func.func @short_bias_gradient_h200(%dy: tensor<2x640x16x16xf32>, %init: tensor<640xf32>) -> tensor<640xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>,
                                        affine_map<(n, c, h, w) -> (c)>],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : tensor<2x640x16x16xf32>) outs(%init : tensor<640xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<640xf32>
  return %s : tensor<640xf32>
}
}

// -----

// A loss over 2048x4: the partial stage's rows are short, but its 2048
// partial results are one row that a single work-item would walk. That
// second stage splits as a row (32 chunks of 64: the largest divisor up to
// the square root that leaves whole texels), then the 32 into the init.
// CHECK-LABEL: func.func @tall_loss
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<2048x4xf32>) outs(%{{.*}} : tensor<2048xf32>)
// CHECK: %[[X:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [32, 64] {fbl.reduction_chunks} : tensor<2048xf32> into tensor<32x64xf32>
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[X]] : tensor<32x64xf32>) outs(%{{.*}} : tensor<32xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[C]] : tensor<32xf32>) outs(%arg1 : tensor<f32>)
// CHECK: return %[[T]]
// SHORT-LABEL: func.func @tall_loss
// UNMODELLED-LABEL: func.func @tall_loss
// SHORT-NOT: tensor.expand_shape
// SHORT: iterator_types = ["reduction"]{{.*}} ins(%{{.*}} : tensor<2048xf32>) outs(%arg1 : tensor<f32>)
func.func @tall_loss(%x: tensor<2048x4xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<2048x4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A vector of 3000 summed into a scalar (a loss over a flattened tensor):
// one row, split into 50 chunks of 60 (3000 = 2^3 x 3 x 5^3: 50 is the
// largest divisor up to its root leaving whole texels); the body's index
// of the row becomes chunk * 60 + offset.
// CHECK-LABEL: func.func @vector_sum
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [50, 60] {fbl.reduction_chunks} : tensor<3000xf32> into tensor<50x60xf32>
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[X]] : tensor<50x60xf32>) outs(%{{.*}} : tensor<50xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[O:.*]] = linalg.index 1
// CHECK: %[[W:.*]] = arith.constant 60 : index
// CHECK: %[[S:.*]] = arith.muli %[[I]], %[[W]]
// CHECK: arith.addi %[[S]], %[[O]]
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[C]] : tensor<50xf32>) outs(%arg1 : tensor<f32>)
// CHECK: return %[[T]]
// SHORT-LABEL: func.func @vector_sum
// SHORT-NOT: tensor.expand_shape
func.func @vector_sum(%x: tensor<3000xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%x : tensor<3000xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %w = arith.mulf %v, %fi : f32
    %r = arith.addf %acc, %w : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A dot product of 4096 is a contraction with no output dim, which the GEMM
// kernels do not take as a split's first stage: it stays whole.
// CHECK-LABEL: func.func @dot
// CHECK-NOT: tensor.expand_shape
// CHECK: iterator_types = ["reduction"]
// CHECK-NOT: linalg.generic
func.func @dot(%a: tensor<4096xf32>, %b: tensor<4096xf32>, %init: tensor<f32>) -> tensor<f32> {
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%a, %b : tensor<4096xf32>, tensor<4096xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A masked-LM loss's count of labels that are not ignored (-100), over
// BERT-base's 8 x 128 tokens, on the H200. Integer tensors live in buffers,
// read an element at a time: walked in one work-item this took 33 us, and
// the model, had it read four labels a texel, would have kept it whole.
// CHECK-LABEL: func.func @label_count_h200
// CHECK: tensor.expand_shape %arg0 {{.*}} into tensor<128x8xi64>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<128xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<128xf32>)
// The model decides it (1024 is below min-row-length's default too):
// SHORT-LABEL: func.func @label_count_h200
// SHORT: tensor.expand_shape %arg0 {{.*}} into tensor<128x8xi64>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
func.func @label_count_h200(%labels: tensor<1024xi64>) -> tensor<f32> {
  %e = tensor.empty() : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%labels : tensor<1024xi64>) outs(%init : tensor<f32>) {
  ^bb0(%l: i64, %acc: f32):
    %ignored = arith.constant -100 : i64
    %one = arith.constant 1.0 : f32
    %z = arith.constant 0.0 : f32
    %kept = arith.cmpi ne, %l, %ignored : i64
    %c = arith.select %kept, %one, %z : f32
    %r = arith.addf %acc, %c : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %n : tensor<f32>
}
}

// -----

// Whisper's first convolution's bias gradient, over 8 images x 3000 frames
// for 384 channels: moving the image loop out leaves a partial stage of
// 384 x 8 rows of 3000, one work-item walking each (0.84 ms on the H100).
// Such a partial stage splits along its row as any row does: 25 chunks of
// 120, then the chunks' sums, then the images'.
// CHECK-LABEL: func.func @conv_bias_gradient_h200
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [8, 384, 25, 120] {fbl.reduction_chunks}
// CHECK: %[[C:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<8x384x25x120xf32>) outs(%{{.*}} : tensor<384x8x25xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[C]] : tensor<384x8x25xf32>) outs(%{{.*}} : tensor<384x8xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<384x8xf32>) outs(%arg1 : tensor<384xf32>)
// CHECK: return %[[T]]
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
func.func @conv_bias_gradient_h200(%dy: tensor<8x384x3000xf32>, %init: tensor<384xf32>) -> tensor<384xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(c, n, t) -> (n, c, t)>,
                                        affine_map<(c, n, t) -> (c)>],
                       iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%dy : tensor<8x384x3000xf32>) outs(%init : tensor<384xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<384xf32>
  return %s : tensor<384xf32>
}
}
