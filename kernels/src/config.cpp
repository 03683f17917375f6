#include "kgemm/config.hpp"

#include <iterator>
#include <sstream>
#include <string>

#include "kgemm/text_number.hpp"
#include "kgemm/variants.hpp"

namespace kgemm {

namespace {
// A config's fields and the values each may take. The bounds are generous for every space
// (the device's own limits are checked at launch) and small enough that block, league and
// scratch sizes worked out from them cannot overflow.
struct Field {
  const char* key;
  int Config::*member;
  int min, max;
  int absent = 0;  // optional fields: the value not written
};
constexpr int kMaxBlock = 4096;      // mb, nb, kb: a slab of 4096 x 4096 floats is 64 MiB
constexpr int kMaxTile = 256;        // tm, tn: the largest compiled tile (the warp-specialized 64 x 256)
constexpr int kMaxTeam = 1 << 16;    // threads; Kokkos refuses more than the device has
constexpr int kMaxSplits = 1024;     // ks
constexpr int kMaxProducts = 1024;   // bb
constexpr int kMaxSlabBuffers = 8;   // st; the space compiles fewer (checked at launch)
constexpr Field kFields[] = {{"mb", &Config::mb, 1, kMaxBlock},  {"nb", &Config::nb, 1, kMaxBlock},
                             {"kb", &Config::kb, 1, kMaxBlock},  {"tm", &Config::tm, 1, kMaxTile},
                             {"tn", &Config::tn, 1, kMaxTile},   {"team", &Config::team, 1, kMaxTeam}};
// Fields after team, in this order, each written only when it differs from its `absent` value.
constexpr Field kOptionalFields[] = {{"ks", &Config::ks, 1, kMaxSplits, 1},
                                     {"bb", &Config::bb, 1, kMaxProducts, 1},
                                     {"st", &Config::slab_buffers, 0, kMaxSlabBuffers, 0}};
constexpr const char* kTensorCores = "_tc";
constexpr const char* kWarpgroups = "_wg";
constexpr const char* kWarpSpecialized = "_ws";
constexpr const char* kFormat =
    "format mb64_nb64_kb32_tm4_tn4_team16, optionally followed by _ks<splits>, _bb<products per team>, "
    "_st<slab buffers> and _tc, _wg or _ws";

std::string range_of(const Field& field) { return std::to_string(field.min) + " to " + std::to_string(field.max); }

bool has_key(const std::string& token, const std::string& key) {
  return token.compare(0, key.size(), key) == 0 && token.size() > key.size() &&
         token.find_first_not_of("0123456789", key.size()) == std::string::npos;
}

const Field* field_out_of_range(const Config& c) {
  const auto outside = [&](const Field& field) { return c.*field.member < field.min || c.*field.member > field.max; };
  for (const Field& field : kFields)
    if (outside(field)) return &field;
  for (const Field& field : kOptionalFields)
    if (outside(field)) return &field;
  return nullptr;
}

// Without building the lists: this runs on every launch.
bool compiled(const Config& c) {
  bool found = false;
  const auto match = [&](auto tile) { found = found || (tile.tm == c.tm && tile.tn == c.tn); };
  if (c.warpgroups()) {
    for_each_warpgroup_tile(match);
    if (c.warp_specialized()) for_each_warp_specialized_tile(match);
  } else if (c.tensor_cores()) {
    for_each_warp_tile(match);
  } else {
    for_each_micro_tile(match);
  }
  return found;
}

const char* tile_kind(const Config& c) {
  switch (c.family) {
    case Family::WarpSpecialized: return "warp-specialized tile ";
    case Family::Warpgroup: return "warpgroup tile ";
    case Family::TensorCore: return "tensor-core warp tile ";
    default: return "micro-tile ";
  }
}
std::vector<std::pair<int, int>> tiles_of_kind(const Config& c) {
  switch (c.family) {
    case Family::WarpSpecialized: return warp_specialized_tiles();
    case Family::Warpgroup: return warpgroup_tiles();
    case Family::TensorCore: return warp_tiles();
    default: return micro_tiles();
  }
}

std::string tile_list(const std::vector<std::pair<int, int>>& tiles) {
  std::string known;
  for (const auto& [m, n] : tiles) known += " " + dims(m, n);
  return known;
}
}  // namespace

std::string dims(int rows, int cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// Appends rather than streams: every launch names its kernel with this (the label profilers
// see), and an ostringstream is a noticeable share of a batch-1 call's host time
// (docs/gpu-notes.md, s12).
std::string to_string(const Config& config) {
  std::string out;
  out.reserve(64);
  const auto append = [&](const Field& field) {
    out += field.key;
    out += std::to_string(config.*field.member);
  };
  for (const Field& field : kFields) {
    if (&field != kFields) out += '_';
    append(field);
  }
  for (const Field& field : kOptionalFields)
    if (config.*field.member != field.absent) {
      out += '_';
      append(field);
    }
  out += family_suffix(config);
  return out;
}

const char* family_suffix(Family family) {
  switch (family) {
    case Family::WarpSpecialized: return kWarpSpecialized;
    case Family::Warpgroup: return kWarpgroups;
    case Family::TensorCore: return kTensorCores;
    default: return "";
  }
}

const char* family_suffix(const Config& config) {
  return family_suffix(config.family);
}

std::string why_malformed(const Config& c) {
  if (const Field* field = field_out_of_range(c))
    return std::string(field->key) + " = " + std::to_string(c.*field->member) + " is outside " + range_of(*field);
  if (!compiled(c))
    return std::string(tile_kind(c)) + dims(c.tm, c.tn) + " is not a compiled variant; compiled:" + tile_list(tiles_of_kind(c));
  if (c.mb % c.tm != 0 || c.nb % c.tn != 0)
    return "block " + dims(c.mb, c.nb) + " is not a multiple of the micro-tile " + dims(c.tm, c.tn) +
           "; choose mb a multiple of tm and nb a multiple of tn";
  if (c.team % c.bb != 0)
    return "team " + std::to_string(c.team) + " does not split into bb = " + std::to_string(c.bb) +
           " products of equal teams; make team a multiple of bb";
  if (c.bb > 1 && c.ks > 1) return "several products per team (bb) and split K (ks) do not combine; set one of them to 1";
  if (c.tensor_cores() && c.kb % 16 != 0) return "tensor-core slabs are 16-deep fragments; make kb a multiple of 16";
  if (c.warpgroups() && c.kb > 64)
    return "warpgroup configs hold a slab's A fragments in registers, 64 k at most; make kb 16, 32, 48 or 64";
  if (c.warpgroups() && c.bb > 1) return "warpgroup configs take one product per team; drop _bb";
  if (c.warpgroups() && is_warpgroup_tile_of<DType::F32>(c.tm, c.tn) && c.kb != 16 && c.kb != 32)
    return "the fp32 warpgroup tile " + dims(c.tm, c.tn) +
           " reads A's slabs as rows of 16 or 32 floats (the 64- or 128-byte swizzle); make kb 16 or 32";
  if (c.warp_specialized() && !is_warp_specialized_tile(c.tm, c.tn))
    return "the warp-specialized kernel (_ws) multiplies fp16 data; its tiles are" + tile_list(warp_specialized_tiles());
  if (c.warp_specialized() && c.kb != 64)
    return "the warp-specialized kernel (_ws) stages A's slabs as rows of 64 fp16 (the 128-byte swizzle); make kb 64";
  if (c.tensor_cores() && c.threads_per_product() != c.team_of_tiles())
    return std::string("a tensor-core team is ") + (c.warpgroups() ? "one 128-thread warpgroup" : "one 32-thread warp") + " per " +
           dims(c.tm, c.tn) + " tile" + (c.warp_specialized() ? " and the producer warpgroup" : "") + ": team " +
           std::to_string(c.team_of_tiles() * c.bb) + " for this block" + (c.bb > 1 ? " and bb" : "");
  return "";
}

Config parse_config(const std::string& text) {
  const auto not_a_config = [&](const std::string& why) {
    return InvalidArgument("'" + text + "' is not a config string: " + why + " (" + kFormat + ")");
  };
  const auto read = [&](const Field& field, const std::string& token) {
    const auto value = integer_in(std::string_view(token).substr(std::string(field.key).size()), field.min, field.max);
    if (!value) throw not_a_config("'" + token + "': " + field.key + " must be " + range_of(field));
    return *value;
  };
  Config config;
  const auto ends_with = [&](const std::string& suffix) {
    return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (Family family : {Family::WarpSpecialized, Family::Warpgroup, Family::TensorCore})
    if (ends_with(family_suffix(family))) {
      config.family = family;
      break;
    }
  const std::size_t suffix = std::string(family_suffix(config)).size();
  std::istringstream in(text.substr(0, text.size() - suffix));
  std::string token;
  for (const Field& field : kFields) {
    const std::string key = field.key;
    if (!std::getline(in, token, '_') || !has_key(token, key))
      throw not_a_config("expected field '" + key + "<number>'");
    config.*field.member = read(field, token);
  }
  const Field* next = std::begin(kOptionalFields);
  while (std::getline(in, token, '_')) {
    while (next != std::end(kOptionalFields) && !has_key(token, next->key)) ++next;
    if (next == std::end(kOptionalFields)) throw not_a_config("unexpected '" + token + "' after team");
    config.*next->member = read(*next, token);
    ++next;
  }
  if (const std::string why = why_malformed(config); !why.empty())
    throw InvalidArgument("config '" + text + "' cannot run anywhere: " + why);
  return config;
}

}  // namespace kgemm
