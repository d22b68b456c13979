// RUN: fbl-opt %s -split-input-file -fbl-fold-index-transforms | FileCheck %s

// A head split whose result layout is the composed one is a view.
// CHECK-LABEL: func.func @head_split_folds_to_view
// CHECK: %[[V:.*]] = fbl.reshape_view %arg0 {{\[}}[0], [1, 2]] : tensor<16x64xf32, #fbl.channel_packed<packed = 1>> -> tensor<16x4x16xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>
// CHECK-NOT: fbl.relayout
// CHECK: return %[[V]]
func.func @head_split_folds_to_view(%x: tensor<16x64xf32, #fbl.channel_packed<packed = 1>>)
    -> tensor<16x4x16xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>> {
  %0 = tensor.expand_shape %x [[0], [1, 2]] output_shape [16, 4, 16]
      : tensor<16x64xf32, #fbl.channel_packed<packed = 1>>
      into tensor<16x4x16xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>
  return %0 : tensor<16x4x16xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>
}

// -----

// A transpose into another layout than the composed one: the source is
// relaid out into the layout whose view is the result, then viewed.
// CHECK-LABEL: func.func @transpose_needs_a_relayout
// CHECK: %[[R:.*]] = fbl.relayout %arg0 : tensor<8x16xf32, #fbl.channel_packed<packed = 1>> to tensor<8x16xf32, #fbl.rtile<tile = [4, 1], packed = 0, inter = col_major>>
// CHECK: %[[V:.*]] = fbl.transpose_view %[[R]], [1, 0] : {{.*}} -> tensor<16x8xf32, #fbl.channel_packed<packed = 1>>
// CHECK: return %[[V]]
func.func @transpose_needs_a_relayout(%x: tensor<8x16xf32, #fbl.channel_packed<packed = 1>>)
    -> tensor<16x8xf32, #fbl.channel_packed<packed = 1>> {
  %e = tensor.empty() : tensor<16x8xf32, #fbl.channel_packed<packed = 1>>
  %t = linalg.transpose ins(%x : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>)
      outs(%e : tensor<16x8xf32, #fbl.channel_packed<packed = 1>>) permutation = [1, 0]
  return %t : tensor<16x8xf32, #fbl.channel_packed<packed = 1>>
}

// -----

// A generic that only permutes its input is a transpose too.
// CHECK-LABEL: func.func @generic_transpose_folds_to_view
// CHECK: fbl.transpose_view %arg0, [1, 0] : tensor<8x16xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>> -> tensor<16x8xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
// CHECK-NOT: linalg.generic
func.func @generic_transpose_folds_to_view(%x: tensor<8x16xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>)
    -> tensor<16x8xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>> {
  %e = tensor.empty() : tensor<16x8xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j, i)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>)
      outs(%e : tensor<16x8xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<16x8xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
  return %t : tensor<16x8xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
}

// -----

// Merging a dim of 2 into its neighbour splits texels in both directions:
// the data goes through a row-major buffer, where reshapes are views.
// CHECK-LABEL: func.func @texel_splitting_reshape_goes_through_a_buffer
// CHECK: %[[B:.*]] = fbl.relayout %arg0 : tensor<4x3x2xf32, #fbl.channel_packed<packed = 2>> to tensor<4x3x2xf32, #fbl.buffer>
// CHECK: %[[V:.*]] = fbl.reshape_view %[[B]] {{\[}}[0], [1, 2]] : tensor<4x3x2xf32, #fbl.buffer> -> tensor<4x6xf32, #fbl.buffer>
// CHECK: %[[R:.*]] = fbl.relayout %[[V]] : tensor<4x6xf32, #fbl.buffer> to tensor<4x6xf32, #fbl.channel_packed<packed = 1>>
// CHECK: return %[[R]]
func.func @texel_splitting_reshape_goes_through_a_buffer(%x: tensor<4x3x2xf32, #fbl.channel_packed<packed = 2>>)
    -> tensor<4x6xf32, #fbl.channel_packed<packed = 1>> {
  %0 = tensor.collapse_shape %x [[0], [1, 2]] : tensor<4x3x2xf32, #fbl.channel_packed<packed = 2>> into tensor<4x6xf32, #fbl.channel_packed<packed = 1>>
  return %0 : tensor<4x6xf32, #fbl.channel_packed<packed = 1>>
}

// -----

// Unencoded IR (not laid out yet) is left alone.
// CHECK-LABEL: func.func @unencoded
// CHECK: tensor.expand_shape
func.func @unencoded(%x: tensor<4x8xf32>) -> tensor<4x2x4xf32> {
  %0 = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  return %0 : tensor<4x2x4xf32>
}
