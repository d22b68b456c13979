// The projections and scores of one self-attention head group, with fbl
// layouts chosen by hand: weights in 4x4 R-Tiles (read whole by the forward
// X·W and by the backward dW = Xᵀ·dY alike), activations channel-packed, and
// the head split / head transpose as zero-cost views (head_dim 64 % 4 == 0).
//
//   fbl-opt examples/attention_layouts.mlir -canonicalize
//   fbl-translate --fbl-to-layout-json examples/attention_layouts.mlir

#act = #fbl.channel_packed<packed = 1>
#w = #fbl.rtile<tile = [4, 4], packed = 1, intra = rows_on_x>
#heads = #fbl.image<tile = [1, 1, 4], packed = 2, x = [d1, d2], y = [d0], layers = []>
#heads_major = #fbl.image<tile = [1, 1, 4], packed = 2, x = [d0, d2], y = [d1], layers = []>
#keys_t = #fbl.image<tile = [1, 4, 1], packed = 1, x = [d0, d1], y = [d2], layers = []>
#scores = #fbl.channel_packed<packed = 2, batch = layers>

module attributes {fbl.target = #fbl.target<"adreno-a740">} {
  func.func @attention_scores(
      %x: tensor<128x512xf32, #act>,
      %wq: tensor<512x512xf32, #w> {fbl.param},
      %wk: tensor<512x512xf32, #w> {fbl.param}) -> tensor<8x128x128xf32, #scores> {
    %zero = arith.constant 0.0 : f32
    %init = tensor.empty() : tensor<128x512xf32, #act>
    %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<128x512xf32, #act>) -> tensor<128x512xf32, #act>
    %q = linalg.matmul ins(%x, %wq : tensor<128x512xf32, #act>, tensor<512x512xf32, #w>)
                       outs(%acc : tensor<128x512xf32, #act>) -> tensor<128x512xf32, #act>
    %k = linalg.matmul ins(%x, %wk : tensor<128x512xf32, #act>, tensor<512x512xf32, #w>)
                       outs(%acc : tensor<128x512xf32, #act>) -> tensor<128x512xf32, #act>
    // [S, hidden] -> [S, H, D] -> [H, S, D]: views, no kernel runs.
    %qh = fbl.reshape_view %q [[0], [1, 2]] : tensor<128x512xf32, #act> -> tensor<128x8x64xf32, #heads>
    %qt = fbl.transpose_view %qh, [1, 0, 2] : tensor<128x8x64xf32, #heads> -> tensor<8x128x64xf32, #heads_major>
    %kh = fbl.reshape_view %k [[0], [1, 2]] : tensor<128x512xf32, #act> -> tensor<128x8x64xf32, #heads>
    // Kᵀ per head: [S, H, D] -> [H, D, S], also a view.
    %kt = fbl.transpose_view %kh, [1, 2, 0] : tensor<128x8x64xf32, #heads> -> tensor<8x64x128xf32, #keys_t>
    %sinit = tensor.empty() : tensor<8x128x128xf32, #scores>
    %sacc = linalg.fill ins(%zero : f32) outs(%sinit : tensor<8x128x128xf32, #scores>) -> tensor<8x128x128xf32, #scores>
    %s = linalg.batch_matmul ins(%qt, %kt : tensor<8x128x64xf32, #heads_major>, tensor<8x64x128xf32, #keys_t>)
                             outs(%sacc : tensor<8x128x128xf32, #scores>) -> tensor<8x128x128xf32, #scores>
    return %s : tensor<8x128x128xf32, #scores>
  }
}
