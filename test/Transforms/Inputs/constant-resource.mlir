// A constant tensor whose data is a dense_resource blob the module carries
// (1, 2, 3, 4 as f32): test/Transforms/constant-tensors.test.
func.func @res(%w: tensor<4xf32> {fbl.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense_resource<table> : tensor<4xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%w, %c : tensor<4xf32>, tensor<4xf32>) outs(%lz : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
{-#
  dialect_resources: {
    builtin: {
      table: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
