// RUN: fbl-opt %s -split-input-file | fbl-opt -split-input-file | FileCheck %s
// RUN: fbl-opt %s -split-input-file -mlir-print-op-generic | fbl-opt -split-input-file | FileCheck %s

#cp = #fbl.channel_packed<packed = 1>
#rt = #fbl.rtile<tile = [4, 4], packed = 1>

// CHECK-LABEL: func.func @relayout_between_layouts
// CHECK: %[[R:.*]] = fbl.relayout %{{.*}} : tensor<64x32xf32, #fbl.channel_packed<packed = 1>> to tensor<64x32xf32, #fbl.rtile<tile = [4, 4], packed = 1>>
// CHECK: return %[[R]]
func.func @relayout_between_layouts(%x: tensor<64x32xf32, #cp>) -> tensor<64x32xf32, #rt> {
  %0 = fbl.relayout %x : tensor<64x32xf32, #cp> to tensor<64x32xf32, #rt>
  return %0 : tensor<64x32xf32, #rt>
}

// -----

// A logical tensor gets its first layout.
// CHECK-LABEL: func.func @relayout_sets_layout
// CHECK: fbl.relayout %{{.*}} : tensor<5x7xf32> to tensor<5x7xf32, #fbl.buffer>
func.func @relayout_sets_layout(%x: tensor<5x7xf32>) -> tensor<5x7xf32, #fbl.buffer> {
  %0 = fbl.relayout %x : tensor<5x7xf32> to tensor<5x7xf32, #fbl.buffer>
  return %0 : tensor<5x7xf32, #fbl.buffer>
}

// -----

// Transposing an R-Tile renames its dims: a view, no data moves.
// CHECK-LABEL: func.func @transpose_view_of_rtile
// CHECK: fbl.transpose_view %{{.*}}, [1, 0] : tensor<64x32xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>> -> tensor<32x64xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
func.func @transpose_view_of_rtile(%x: tensor<64x32xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>)
    -> tensor<32x64xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>> {
  %0 = fbl.transpose_view %x, [1, 0] : tensor<64x32xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>
      -> tensor<32x64xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
  return %0 : tensor<32x64xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
}

// -----

#cp = #fbl.channel_packed<packed = 1>

// The head split of attention (hidden 512 = 8 heads x 64) and the move of
// heads to the front are views of the channel-packed activation.
// CHECK-LABEL: func.func @head_split_is_a_view
// CHECK: %[[S:.*]] = fbl.reshape_view %{{.*}} {{\[}}[0], [1, 2]] : tensor<128x512xf32, #fbl.channel_packed<packed = 1>> -> tensor<128x8x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>
// CHECK: fbl.transpose_view %[[S]], [1, 0, 2] : {{.*}} -> tensor<8x128x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d0, d2], y = [d1], layers = []>>
func.func @head_split_is_a_view(%x: tensor<128x512xf32, #cp>)
    -> tensor<8x128x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d0, d2], y = [d1], layers = []>> {
  %0 = fbl.reshape_view %x [[0], [1, 2]] : tensor<128x512xf32, #cp>
      -> tensor<128x8x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>
  %1 = fbl.transpose_view %0, [1, 0, 2] : tensor<128x8x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>
      -> tensor<8x128x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d0, d2], y = [d1], layers = []>>
  return %1 : tensor<8x128x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d0, d2], y = [d1], layers = []>>
}

// -----

#cp = #fbl.channel_packed<packed = 1>

// Merging heads back is a collapse to the original layout.
// CHECK-LABEL: func.func @head_merge_is_a_view
// CHECK: fbl.reshape_view %{{.*}} {{\[}}[0], [1, 2]] : {{.*}} -> tensor<128x512xf32, #fbl.channel_packed<packed = 1>>
func.func @head_merge_is_a_view(%x: tensor<128x8x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>)
    -> tensor<128x512xf32, #cp> {
  %0 = fbl.reshape_view %x [[0], [1, 2]] : tensor<128x8x64xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>>
      -> tensor<128x512xf32, #cp>
  return %0 : tensor<128x512xf32, #cp>
}

// -----

// Folding a batch dim into the rows of a buffer is a view too.
// CHECK-LABEL: func.func @buffer_collapse
// CHECK: fbl.reshape_view %{{.*}} {{\[}}[0, 1], [2]] : tensor<4x8x16xf32, #fbl.buffer> -> tensor<32x16xf32, #fbl.buffer>
func.func @buffer_collapse(%x: tensor<4x8x16xf32, #fbl.buffer>) -> tensor<32x16xf32, #fbl.buffer> {
  %0 = fbl.reshape_view %x [[0, 1], [2]] : tensor<4x8x16xf32, #fbl.buffer> -> tensor<32x16xf32, #fbl.buffer>
  return %0 : tensor<32x16xf32, #fbl.buffer>
}

// -----

// Unit dims to a scalar and back (a batch-1 loss): no groups, as
// tensor.collapse_shape writes it.
// CHECK-LABEL: func.func @buffer_unit_to_scalar
// CHECK: fbl.reshape_view %{{.*}} [] : tensor<1x1xf32, #fbl.buffer> -> tensor<f32, #fbl.buffer>
// CHECK: fbl.reshape_view %{{.*}} [] : tensor<f32, #fbl.buffer> -> tensor<1x1x1xf32, #fbl.buffer>
func.func @buffer_unit_to_scalar(%x: tensor<1x1xf32, #fbl.buffer>) -> tensor<1x1x1xf32, #fbl.buffer> {
  %0 = fbl.reshape_view %x [] : tensor<1x1xf32, #fbl.buffer> -> tensor<f32, #fbl.buffer>
  %1 = fbl.reshape_view %0 [] : tensor<f32, #fbl.buffer> -> tensor<1x1x1xf32, #fbl.buffer>
  return %1 : tensor<1x1x1xf32, #fbl.buffer>
}

// -----

#cp = #fbl.channel_packed<packed = 1>
#rt = #fbl.rtile<tile = [4, 4], packed = 1>

// A view's result may name the composed layout through any equivalent
// encoding: a 4x4 R-Tile with rows down y is the channel-packed layout.
// CHECK-LABEL: func.func @equivalent_encodings
// CHECK: fbl.transpose_view %{{.*}}, [0, 1] : tensor<16x16xf32, #fbl.rtile<tile = [4, 4], packed = 1>> -> tensor<16x16xf32, #fbl.channel_packed<packed = 1>>
func.func @equivalent_encodings(%x: tensor<16x16xf32, #rt>) -> tensor<16x16xf32, #cp> {
  %0 = fbl.transpose_view %x, [0, 1] : tensor<16x16xf32, #rt> -> tensor<16x16xf32, #cp>
  return %0 : tensor<16x16xf32, #cp>
}

// -----

#rt = #fbl.rtile<tile = [4, 4], packed = 1>

// Encoded tensors flow through upstream ops unchanged.
// CHECK-LABEL: func.func @linalg_on_encoded_tensors
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x32xf32, #fbl.rtile<tile = [4, 4], packed = 1>>, tensor<32x16xf32, #fbl.rtile<tile = [4, 4], packed = 1>>)
func.func @linalg_on_encoded_tensors(%a: tensor<64x32xf32, #rt>, %b: tensor<32x16xf32, #rt>,
                                     %c: tensor<64x16xf32, #rt>) -> tensor<64x16xf32, #rt> {
  %0 = linalg.matmul ins(%a, %b : tensor<64x32xf32, #rt>, tensor<32x16xf32, #rt>)
                     outs(%c : tensor<64x16xf32, #rt>) -> tensor<64x16xf32, #rt>
  return %0 : tensor<64x16xf32, #rt>
}

// -----

// A kernel with variants: other bodies with the body's arguments, printed
// after it.
#cp = #fbl.channel_packed<packed = 1>
// CHECK-LABEL: func.func @dispatch_variants
// CHECK:         fbl.dispatch @k0_copy ins(%{{.*}} : tensor<4x8xf32, #fbl.channel_packed<packed = 1>>) outs(%{{.*}} : tensor<4x8xf32, #fbl.channel_packed<packed = 1>>) grid [2, 4, 1] workgroup [2, 4, 1] {
// CHECK:           fbl.load_texel
// CHECK-NEXT:      fbl.store_texel
// CHECK:         } variants {
// CHECK:           fbl.load_texel
// CHECK-NEXT:      math.absf
// CHECK-NEXT:      fbl.store_texel
// CHECK:         }, {
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:    } -> tensor<4x8xf32, #fbl.channel_packed<packed = 1>>
func.func @dispatch_variants(%x: tensor<4x8xf32, #cp>) -> tensor<4x8xf32, #cp> {
  %e = tensor.empty() : tensor<4x8xf32, #cp>
  %r = fbl.dispatch @k0_copy ins(%x : tensor<4x8xf32, #cp>) outs(%e : tensor<4x8xf32, #cp>) grid [2, 4, 1] workgroup [2, 4, 1] {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    %c0 = arith.constant 0 : index
    %t = fbl.load_texel %a[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    fbl.store_texel %t, %o[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    fbl.kernel_return
  } variants {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    %c0 = arith.constant 0 : index
    %t = fbl.load_texel %a[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    %u = math.absf %t : vector<4xf32>
    fbl.store_texel %u, %o[%c0, %c0, %c0] : tensor<4x8xf32, #cp>
    fbl.kernel_return
  }, {
  ^bb0(%a: tensor<4x8xf32, #cp>, %o: tensor<4x8xf32, #cp>):
    fbl.kernel_return
  } -> tensor<4x8xf32, #cp>
  return %r : tensor<4x8xf32, #cp>
}
