// RUN: fbl-opt %s -split-input-file -fbl-split-reductions=row-kernels=true | FileCheck %s
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions | FileCheck %s --check-prefix=SPLIT
// RUN: fbl-opt %s -split-input-file -fbl-split-reductions="row-kernels=true row-kernel-rows-per-unit=8" \
// RUN:   | FileCheck %s --check-prefix=EIGHT

// With row-kernels, a row reduction that an elementwise op over the same
// loops reads back along the row (a LayerNorm's mean over ViT-B/16's 768
// channels for 6304 tokens: 48 rows per SM of the H200) stays whole: a row
// kernel computes it beside its reader. Without the option, the H200's
// cost model splits it in two stages.

// CHECK-LABEL: func.func @mean_read_back
// CHECK-NOT:     fbl.reduction_chunks
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<6304x768xf32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]

// SPLIT-LABEL: func.func @mean_read_back
// SPLIT:         fbl.reduction_chunks
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @mean_read_back(%x: tensor<6304x768xf32>) -> tensor<6304x768xf32> {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6304xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6304xf32>) -> tensor<6304xf32>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6304x768xf32>) outs(%s0 : tensor<6304xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6304xf32>
    %ye = tensor.empty() : tensor<6304x768xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<6304x768xf32>, tensor<6304xf32>) outs(%ye : tensor<6304x768xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<6304x768xf32>
    return %y : tensor<6304x768xf32>
  }
}

// -----

// Too few rows for a work-group each to fill the device (256 tokens, fewer
// than 8 per SM) and long rows: split, row kernel or not.

// CHECK-LABEL: func.func @few_long_rows
// CHECK:         fbl.reduction_chunks
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @few_long_rows(%x: tensor<256x32000xf32>) -> tensor<256x32000xf32> {
    %ninf = arith.constant 0xFF800000 : f32
    %re = tensor.empty() : tensor<256xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<256xf32>) -> tensor<256xf32>
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<256x32000xf32>) outs(%m0 : tensor<256xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maximumf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<256xf32>
    %ye = tensor.empty() : tensor<256x32000xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %m : tensor<256x32000xf32>, tensor<256xf32>) outs(%ye : tensor<256x32000xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<256x32000xf32>
    return %y : tensor<256x32000xf32>
  }
}

// -----

// A row sum no op reads back along the row (a bias gradient returned): no
// row kernel takes it, so the model decides as before.

// CHECK-LABEL: func.func @not_read_back
// CHECK:         fbl.reduction_chunks
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @not_read_back(%x: tensor<6304x768xf32>) -> tensor<6304xf32> {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<6304xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<6304xf32>) -> tensor<6304xf32>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6304x768xf32>) outs(%s0 : tensor<6304xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<6304xf32>
    return %s : tensor<6304xf32>
  }
}

// -----

// BERT-base's 1024 tokens of 768 channels: at least 4 rows per SM of the
// H200 (528), so left whole for a row kernel by default; split where 8 rows
// per SM (1056) are asked for.

// CHECK-LABEL: func.func @rows_per_unit
// CHECK-NOT:     fbl.reduction_chunks
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<1024x768xf32>)
// EIGHT-LABEL: func.func @rows_per_unit
// EIGHT:         fbl.reduction_chunks
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @rows_per_unit(%x: tensor<1024x768xf32>) -> tensor<1024x768xf32> {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<1024xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1024xf32>) -> tensor<1024xf32>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<1024x768xf32>) outs(%s0 : tensor<1024xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<1024xf32>
    %ye = tensor.empty() : tensor<1024x768xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<1024x768xf32>, tensor<1024xf32>) outs(%ye : tensor<1024x768xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<1024x768xf32>
    return %y : tensor<1024x768xf32>
  }
}

// -----

// Rows of at most 16 turns of a 128-item work-group (8192 elements) are
// left whole; longer ones split: over BERT-base's 30522-word vocabulary a
// row kernel's work-item walked 60 texels a pass (0.31 ms on the H100 for
// 1024 tokens, 0.18 split).

// CHECK-LABEL: func.func @longest_row_kernel
// CHECK-NOT:     fbl.reduction_chunks
// CHECK-LABEL: func.func @longer_than_a_row_kernel
// CHECK:         fbl.reduction_chunks
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @longest_row_kernel(%x: tensor<1024x8192xf32>) -> tensor<1024x8192xf32> {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<1024xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1024xf32>) -> tensor<1024xf32>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<1024x8192xf32>) outs(%s0 : tensor<1024xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<1024xf32>
    %ye = tensor.empty() : tensor<1024x8192xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<1024x8192xf32>, tensor<1024xf32>) outs(%ye : tensor<1024x8192xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<1024x8192xf32>
    return %y : tensor<1024x8192xf32>
  }
  func.func @longer_than_a_row_kernel(%x: tensor<1024x8196xf32>) -> tensor<1024x8196xf32> {
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<1024xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1024xf32>) -> tensor<1024xf32>
    %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<1024x8196xf32>) outs(%s0 : tensor<1024xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<1024xf32>
    %ye = tensor.empty() : tensor<1024x8196xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : tensor<1024x8196xf32>, tensor<1024xf32>) outs(%ye : tensor<1024x8196xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.divf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<1024x8196xf32>
    return %y : tensor<1024x8196xf32>
  }
}

// -----

// A cross-entropy's row maximum (2048 tokens over a 4096-word vocabulary):
// the forward pass's loss reads it through a per-row scalar op and a mean
// over the rows, and its only elementwise reader is the backward's softmax
// after the loss. A row kernel would go at that reader and store the
// maximum there, after the loss has read it: none forms, so the maximum is
// split as any long row.

// CHECK-LABEL: func.func @read_before_its_row_kernel
// CHECK:         tensor.expand_shape %arg0 {{.*}} {fbl.reduction_chunks} : tensor<2048x4096xf32>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#vec = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
module attributes {fbl.target = #fbl.target<"nvidia-h200">} {
  func.func @read_before_its_row_kernel(%x: tensor<2048x4096xf32>)
      -> (tensor<f32>, tensor<2048x4096xf32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %re = tensor.empty() : tensor<2048xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<2048xf32>) -> tensor<2048xf32>
    %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<2048x4096xf32>) outs(%m0 : tensor<2048xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.maximumf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<2048xf32>
    %t = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
        ins(%m : tensor<2048xf32>) outs(%re : tensor<2048xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.log %a : f32
      linalg.yield %r : f32
    } -> tensor<2048xf32>
    %le = tensor.empty() : tensor<f32>
    %l0 = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
    %l = linalg.generic {indexing_maps = [#vec, #all], iterator_types = ["reduction"]}
        ins(%t : tensor<2048xf32>) outs(%l0 : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %acc, %a : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %ye = tensor.empty() : tensor<2048x4096xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %m : tensor<2048x4096xf32>, tensor<2048xf32>) outs(%ye : tensor<2048x4096xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<2048x4096xf32>
    return %l, %y : tensor<f32>, tensor<2048x4096xf32>
  }
}
