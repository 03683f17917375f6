#include "kgemm/tuner/catalogue.hpp"

#include "kgemm/spaces/error.hpp"
#include "kgemm/text_number.hpp"

#include <climits>
#include <cstdint>
#include <sstream>

namespace kgemm {

namespace {

struct Builder {
  int batch;
  std::vector<LayerShape> shapes;

  // Adds one KxK/stride conv over an input map of side `in`; returns the output side.
  int conv(const std::string& name, int in, int c_in, int c_out, int kernel, int stride) {
    const int pad = kernel / 2;
    const int out = (in + 2 * pad - kernel) / stride + 1;
    const long long rows = static_cast<long long>(batch) * out * out;
    if (rows > INT_MAX)
      throw InvalidArgument(name + " at batch " + std::to_string(batch) + " has " + std::to_string(rows) +
                            " im2col rows, more than a GEMM extent can be (" + std::to_string(INT_MAX) +
                            "); lower the image size or the batch");
    const int m = int(rows), n = c_out, k = c_in * kernel * kernel;
    for (LayerShape& s : shapes)
      if (s.m == m && s.n == n && s.k == k) {
        ++s.count;
        return out;
      }
    const std::string label = name + " (" + std::to_string(kernel) + "x" + std::to_string(kernel) +
                              (stride > 1 ? "/" + std::to_string(stride) : "") + ")";
    shapes.push_back({label, m, n, k, 1});
    return out;
  }
};

}  // namespace

std::vector<LayerShape> resnet_gemm_shapes(const std::string& model, int image, int batch) {
  // The first convolution's padded input (image + 6) must not overflow either.
  if (image < 32 || image > (1 << 20) || batch < 1)
    throw InvalidArgument("image size " + std::to_string(image) + " and batch " + std::to_string(batch) +
                          ": need image 32 to 1048576 and batch >= 1");
  int blocks[4];
  bool bottleneck;
  if (model == "resnet18") {
    blocks[0] = 2, blocks[1] = 2, blocks[2] = 2, blocks[3] = 2, bottleneck = false;
  } else if (model == "resnet34") {
    blocks[0] = 3, blocks[1] = 4, blocks[2] = 6, blocks[3] = 3, bottleneck = false;
  } else if (model == "resnet50") {
    blocks[0] = 3, blocks[1] = 4, blocks[2] = 6, blocks[3] = 3, bottleneck = true;
  } else {
    throw InvalidArgument("unknown model '" + model + "' (expected resnet18, resnet34 or resnet50)");
  }

  Builder b{batch, {}};
  int side = b.conv("conv1", image, 3, 64, 7, 2);
  side = (side + 2 - 3) / 2 + 1;  // 3x3/2 max pool, padding 1
  int channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int width = 64 << stage;
    const int out_channels = bottleneck ? 4 * width : width;
    for (int block = 0; block < blocks[stage]; ++block) {
      const std::string name = "conv" + std::to_string(stage + 2) + "_" + std::to_string(block + 1);
      const int stride = stage > 0 && block == 0 ? 2 : 1;
      int out;
      if (bottleneck) {
        b.conv(name + ".conv1", side, channels, width, 1, 1);
        out = b.conv(name + ".conv2", side, width, width, 3, stride);
        b.conv(name + ".conv3", out, width, out_channels, 1, 1);
      } else {
        out = b.conv(name + ".conv1", side, channels, width, 3, stride);
        b.conv(name + ".conv2", out, width, width, 3, 1);
      }
      if (stride != 1 || channels != out_channels) b.conv(name + ".downsample", side, channels, out_channels, 1, stride);
      side = out;
      channels = out_channels;
    }
  }
  return b.shapes;
}

LayerShape parse_shape(const std::string& text, int row_batch) {
  const auto bad = [&](const std::string& why) {
    return InvalidArgument("bad shape '" + text + "': " + why + " (expected MxNxK, e.g. 3136x64x576)");
  };
  std::vector<int> extents;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, 'x');) {
    const auto value = integer_in(part, 1, INT_MAX);
    if (!value) throw bad(not_an_integer(part, 1, INT_MAX));
    extents.push_back(*value);
  }
  if (extents.size() != 3 || text.back() == 'x') throw bad("need exactly three extents");
  if (std::int64_t(extents[0]) * row_batch > INT_MAX)
    throw bad("M = " + std::to_string(extents[0]) + " times batch " + std::to_string(row_batch) + " exceeds " +
              std::to_string(INT_MAX));
  LayerShape shape;
  shape.layer = text;
  shape.m = extents[0] * row_batch;
  shape.n = extents[1];
  shape.k = extents[2];
  shape.count = 1;
  return shape;
}

}  // namespace kgemm
