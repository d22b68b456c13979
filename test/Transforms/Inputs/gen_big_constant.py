# Writes a model whose f32 constant has N elements (argv[1]):
# test/Transforms/constant-tensors.test.
import sys
n = int(sys.argv[1])
vals = ", ".join(f"{i % 7}.0" for i in range(n))
print(f"""func.func @big(%w: tensor<{n}xf32> {{fbl.param}}) -> tensor<f32> {{
  %zero = arith.constant 0.0 : f32
  %c = arith.constant dense<[{vals}]> : tensor<{n}xf32>
  %le = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}}
      ins(%w, %c : tensor<{n}xf32>, tensor<{n}xf32>) outs(%lz : tensor<f32>) {{
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<f32>
  return %l : tensor<f32>
}}""")
