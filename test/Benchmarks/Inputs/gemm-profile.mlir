#cp = #fbl.channel_packed<packed = 1>
module attributes {fbl.target = #fbl.target<"nvidia-h200", gemm_tile = [8, 2, 16], gemm_tile_classes = [[16384, 8, 2, 16, 8, 1, 0, 2, 1]]>} {
  func.func @step(%a: tensor<64x64xf32, #cp>, %b: tensor<64x64xf32, #cp>,
                  %c: tensor<128x64xf32, #cp>, %d: tensor<64x128xf32, #cp>)
      -> (tensor<128x128xf32, #cp>, tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) {
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<128x128xf32, #cp>
    %f0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    %p = linalg.matmul ins(%c, %d : tensor<128x64xf32, #cp>, tensor<64x128xf32, #cp>) outs(%f0 : tensor<128x128xf32, #cp>) -> tensor<128x128xf32, #cp>
    %e2 = tensor.empty() : tensor<64x64xf32, #cp>
    %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %r = linalg.matmul ins(%a, %b : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f2 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %e3 = tensor.empty() : tensor<64x64xf32, #cp>
    %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    %s = linalg.matmul ins(%b, %a : tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>) outs(%f3 : tensor<64x64xf32, #cp>) -> tensor<64x64xf32, #cp>
    return %p, %r, %s : tensor<128x128xf32, #cp>, tensor<64x64xf32, #cp>, tensor<64x64xf32, #cp>
  }
}
