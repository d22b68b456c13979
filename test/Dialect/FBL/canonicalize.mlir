// RUN: fbl-opt %s -split-input-file -canonicalize | FileCheck %s

#cp = #fbl.channel_packed<packed = 1>

// CHECK-LABEL: func.func @relayout_to_same_layout_folds
// CHECK-NOT: fbl.relayout
// CHECK: return %arg0
func.func @relayout_to_same_layout_folds(%x: tensor<8x8xf32, #cp>) -> tensor<8x8xf32, #cp> {
  %0 = fbl.relayout %x : tensor<8x8xf32, #cp> to tensor<8x8xf32, #cp>
  return %0 : tensor<8x8xf32, #cp>
}

// -----

#cp = #fbl.channel_packed<packed = 1>
#rt = #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>

// CHECK-LABEL: func.func @relayout_of_fill_is_a_fill
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.5
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<8x8xf32, #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>>
// CHECK-NEXT: %[[F:.*]] = linalg.fill {fbl.phase = "backward"} ins(%[[C]] : f32) outs(%[[E]] :
// CHECK-NEXT: return %[[F]]
func.func @relayout_of_fill_is_a_fill() -> tensor<8x8xf32, #rt> {
  %c = arith.constant 2.5 : f32
  %e = tensor.empty() : tensor<8x8xf32, #cp>
  %f = linalg.fill {fbl.phase = "backward"} ins(%c : f32) outs(%e : tensor<8x8xf32, #cp>) -> tensor<8x8xf32, #cp>
  %0 = fbl.relayout %f : tensor<8x8xf32, #cp> to tensor<8x8xf32, #rt>
  return %0 : tensor<8x8xf32, #rt>
}

// -----

// A fill of a tensor that is not fresh is relaid out as any other tensor.
#cp = #fbl.channel_packed<packed = 1>
#rt = #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>

// CHECK-LABEL: func.func @relayout_of_fill_into_an_argument_stays
// CHECK: fbl.relayout
func.func @relayout_of_fill_into_an_argument_stays(%x: tensor<8x8xf32, #cp>) -> tensor<8x8xf32, #rt> {
  %c = arith.constant 2.5 : f32
  %f = linalg.fill ins(%c : f32) outs(%x : tensor<8x8xf32, #cp>) -> tensor<8x8xf32, #cp>
  %0 = fbl.relayout %f : tensor<8x8xf32, #cp> to tensor<8x8xf32, #rt>
  return %0 : tensor<8x8xf32, #rt>
}

// -----

#cp = #fbl.channel_packed<packed = 1>
#rt = #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>

// CHECK-LABEL: func.func @relayout_chain_reads_the_source
// CHECK: %[[R:.*]] = fbl.relayout %arg0 : tensor<8x8xf32, #fbl.channel_packed<packed = 1>> to tensor<8x8xf32, #fbl.buffer>
// CHECK-NEXT: return %[[R]]
func.func @relayout_chain_reads_the_source(%x: tensor<8x8xf32, #cp>) -> tensor<8x8xf32, #fbl.buffer> {
  %0 = fbl.relayout %x : tensor<8x8xf32, #cp> to tensor<8x8xf32, #rt>
  %1 = fbl.relayout %0 : tensor<8x8xf32, #rt> to tensor<8x8xf32, #fbl.buffer>
  return %1 : tensor<8x8xf32, #fbl.buffer>
}

// -----

#cp = #fbl.channel_packed<packed = 1>
#rt = #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>

// CHECK-LABEL: func.func @relayout_round_trip_folds_away
// CHECK-NOT: fbl.relayout
// CHECK: return %arg0
func.func @relayout_round_trip_folds_away(%x: tensor<8x8xf32, #cp>) -> tensor<8x8xf32, #cp> {
  %0 = fbl.relayout %x : tensor<8x8xf32, #cp> to tensor<8x8xf32, #rt>
  %1 = fbl.relayout %0 : tensor<8x8xf32, #rt> to tensor<8x8xf32, #cp>
  return %1 : tensor<8x8xf32, #cp>
}

// -----

#rt = #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>

// CHECK-LABEL: func.func @identity_transpose_view_folds
// CHECK-NOT: fbl.transpose_view
// CHECK: return %arg0
func.func @identity_transpose_view_folds(%x: tensor<8x4xf32, #rt>) -> tensor<8x4xf32, #rt> {
  %0 = fbl.transpose_view %x, [0, 1] : tensor<8x4xf32, #rt> -> tensor<8x4xf32, #rt>
  return %0 : tensor<8x4xf32, #rt>
}

// -----

#cp3 = #fbl.channel_packed<packed = 2>

// A transpose of a transpose is one transpose of the source; back and forth
// is nothing.
// CHECK-LABEL: func.func @transpose_view_chain_composes
// CHECK: %[[T:.*]] = fbl.transpose_view %arg0, [2, 0, 1]
// CHECK-NEXT: return %[[T]], %arg0
func.func @transpose_view_chain_composes(%x: tensor<2x3x8xf32, #cp3>)
    -> (tensor<8x2x3xf32, #fbl.image<tile = [4, 1, 1], packed = 0, x = [d0], y = [d1, d2], layers = []>>,
        tensor<2x3x8xf32, #cp3>) {
  %0 = fbl.transpose_view %x, [1, 0, 2] : tensor<2x3x8xf32, #cp3>
      -> tensor<3x2x8xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d2], y = [d1, d0], layers = []>>
  %1 = fbl.transpose_view %0, [2, 1, 0] : tensor<3x2x8xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d2], y = [d1, d0], layers = []>>
      -> tensor<8x2x3xf32, #fbl.image<tile = [4, 1, 1], packed = 0, x = [d0], y = [d1, d2], layers = []>>
  %2 = fbl.transpose_view %0, [1, 0, 2] : tensor<3x2x8xf32, #fbl.image<tile = [1, 1, 4], packed = 2, x = [d2], y = [d1, d0], layers = []>>
      -> tensor<2x3x8xf32, #cp3>
  return %1, %2 : tensor<8x2x3xf32, #fbl.image<tile = [4, 1, 1], packed = 0, x = [d0], y = [d1, d2], layers = []>>, tensor<2x3x8xf32, #cp3>
}

// -----

#cp = #fbl.channel_packed<packed = 1>

// CHECK-LABEL: func.func @identity_reshape_view_folds
// CHECK-NOT: fbl.reshape_view
func.func @identity_reshape_view_folds(%x: tensor<8x4xf32, #cp>) -> tensor<8x4xf32, #cp> {
  %0 = fbl.reshape_view %x [[0], [1]] : tensor<8x4xf32, #cp> -> tensor<8x4xf32, #cp>
  return %0 : tensor<8x4xf32, #cp>
}

// -----

// A keepdim's zeros reshaped and relaid out, as the layout search leaves a
// norm's statistics' init: one fill in the last layout, which the
// reductions then start from without reading it.
#cp0 = #fbl.channel_packed<packed = 0>

// CHECK-LABEL: func.func @relayout_of_a_view_of_fill_is_a_fill
// CHECK-NEXT: %[[C:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1024xf32, #fbl.channel_packed<packed = 0>>
// CHECK-NEXT: %[[F:.*]] = linalg.fill {fbl.phase = "forward"} ins(%[[C]] : f32) outs(%[[E]] :
// CHECK-NEXT: return %[[F]]
func.func @relayout_of_a_view_of_fill_is_a_fill() -> tensor<1024xf32, #cp0> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1xf32, #fbl.buffer>
  %f = linalg.fill {fbl.phase = "forward"} ins(%c : f32) outs(%e : tensor<1024x1xf32, #fbl.buffer>) -> tensor<1024x1xf32, #fbl.buffer>
  %v = fbl.reshape_view %f [[0, 1]] : tensor<1024x1xf32, #fbl.buffer> -> tensor<1024xf32, #fbl.buffer>
  %0 = fbl.relayout %v : tensor<1024xf32, #fbl.buffer> to tensor<1024xf32, #cp0>
  return %0 : tensor<1024xf32, #cp0>
}

// -----

#rt = #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>
#rtt = #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>

// CHECK-LABEL: func.func @transpose_view_of_fill_is_a_fill
// CHECK-NOT: fbl.transpose_view
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16x8xf32, #fbl.rtile<tile = [4, 4], packed = 0, inter = col_major>>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] :
// CHECK-NEXT: return %[[F]]
func.func @transpose_view_of_fill_is_a_fill() -> tensor<16x8xf32, #rtt> {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8x16xf32, #rt>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<8x16xf32, #rt>) -> tensor<8x16xf32, #rt>
  %0 = fbl.transpose_view %f, [1, 0] : tensor<8x16xf32, #rt> -> tensor<16x8xf32, #rtt>
  return %0 : tensor<16x8xf32, #rtt>
}

// -----

// A view of a fill into an argument addresses the argument: it stays.
// CHECK-LABEL: func.func @view_of_fill_into_an_argument_stays
// CHECK: fbl.reshape_view
func.func @view_of_fill_into_an_argument_stays(%x: tensor<1024x1xf32, #fbl.buffer>) -> tensor<1024xf32, #fbl.buffer> {
  %c = arith.constant 0.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%x : tensor<1024x1xf32, #fbl.buffer>) -> tensor<1024x1xf32, #fbl.buffer>
  %v = fbl.reshape_view %f [[0, 1]] : tensor<1024x1xf32, #fbl.buffer> -> tensor<1024xf32, #fbl.buffer>
  return %v : tensor<1024xf32, #fbl.buffer>
}
