#pragma once
// The GEMM shapes of ResNet convolutions in im2col form, for any image size and batch:
// a KxK conv with Cin inputs and Cout outputs over an HxW output map is the GEMM
// M = batch*H*W, N = Cout, K = Cin*K*K. Distinct shapes come in first-appearance order,
// which for ResNet-50 v1.5 at 224x224 is the 20-shape table of the source thesis (5.2.1).
#include <string>
#include <vector>

namespace kgemm {

struct LayerShape {
  std::string layer;  // first layer with this shape, e.g. "conv3_1.conv2 (3x3/2)"
  int m = 0, n = 0, k = 0;
  int count = 0;      // how many conv layers of the model share the shape
};

// model: resnet18, resnet34 or resnet50 (v1.5: the stride sits on the 3x3 conv).
// Throws InvalidArgument for an unknown model or a non-positive image or batch.
std::vector<LayerShape> resnet_gemm_shapes(const std::string& model, int image = 224, int batch = 1);

// "MxNxK" (e.g. 3136x64x576), its rows multiplied by `row_batch` (an im2col GEMM of a batch),
// named by the text. Throws InvalidArgument naming the text unless it is exactly three
// positive integers and M * row_batch fits an extent.
LayerShape parse_shape(const std::string& text, int row_batch = 1);

}  // namespace kgemm
