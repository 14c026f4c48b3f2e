// Park files: a context written to disk so that it can be woken later without recomputing its
// KV cells.
//
// Layout (little-endian). A 24-byte header: the magic "ARBPARK\0", u32 format version, u32
// section count, u64 checksum of the first 16 bytes. Then sections, each: u32 tag, u32 zero,
// u64 payload length, the payload, and a u64 checksum (checksum64) of the tag, zero, length
// and payload together. Sections, in order:
//   TOKS  the conversation: u64 n, n x i32 token ids, u8 has_pending, i32 pending (a sampled
//         token not yet fed through the model), u32 n_detok, the held generation (the
//         byte form of session.hpp's HeldGeneration: detokenizer state, text held back, stop
//         strings, whether the generation ended; session_park.cpp; a bare
//         StreamDetokenizer::serialize state in older files; empty when none). This section's
//         layout never changes between versions, so a file of another version can still be
//         re-prefilled.
//   SAMP  Sampler::serialize: the settings, the RNG state and the penalty history (may be empty)
//   FPRT  the model fingerprint (ModelFingerprint::encode)
//   LOGT  the logits of the last fed token (n_vocab floats; empty when there are none)
//   KVCL  u64 n_cells, then for each page of the sequence, for each layer: for each kv head the
//         K rows of the page's filled cells, then for each kv head the V rows, then (models
//         with an indexer) the indexer key rows (the page layout of kv_cache.hpp, with only
//         cells [0, n_cells) stored)
//   END   empty: its presence says the file is complete
// Derived per-block state (the pooled indexer keys) is not stored; it is rebuilt at wake.
#pragma once

#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/result.hpp>
#include <arbor/tokenizer.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

constexpr uint32_t kParkVersion = 1;

// A 64-bit checksum over a byte stream, fed in pieces of any size (the result depends only on
// the bytes): four lanes over 32-byte stripes, each lane acc = rotl(acc + w * P2, 31) * P1,
// merged and avalanched at the end with the length and the tail bytes.
class Checksum64 {
public:
    Checksum64();
    void update(const void* data, size_t n);
    uint64_t digest() const;

private:
    void stripe(const uint8_t* p);
    uint64_t acc_[4];
    uint8_t buf_[32];
    size_t buffered_ = 0;
    uint64_t total_ = 0;
};
uint64_t checksum64(const void* data, size_t n);

// What a park file must match to have its cells used with a model.
struct ModelFingerprint {
    uint64_t file_size = 0;
    uint64_t tensor_table_hash = 0;  // names, shapes, types and offsets of every tensor
    std::string architecture;
    KvType kv_type = KvType::F16;
    int64_t n_layer = 0, n_head_kv = 0, head_dim_k = 0, head_dim_v = 0, page_cells = kKvPageCells, n_vocab = 0;

    static ModelFingerprint of(const Model& model, KvType kv_type);
    std::string encode() const;
    static Result<ModelFingerprint> decode(std::string_view bytes);
    // "" when equal, else the first field that differs with both values.
    std::string mismatch(const ModelFingerprint& file) const;
};

// Everything of a context except its cells.
struct ParkContents {
    std::vector<TokenId> tokens;        // fed through the model (cells [0, n) hold them)
    std::optional<TokenId> pending;     // sampled and accepted, not yet fed
    std::string detok_state;            // StreamDetokenizer::serialize, or empty
    std::string sampler_state;          // Sampler::serialize, or empty
    std::vector<float> logits;          // of the last fed token
};

// Writes atomically (temp file, fsync, rename, fsync the directory): a crash leaves the old
// file or the new one. seq must hold exactly c.tokens.size() cells.
Status write_park_file(const std::string& path, const Model& model, const KvSequence& seq, const ParkContents& c);

struct ParkRead {
    ParkContents contents;      // tokens and pending always; the rest when their sections are valid
    bool cells_restored = false;
    int64_t cells = 0;          // cells restored into the sequence
    std::string problem;        // why the cells were not restored (empty: they were)
};

// Reads a park file into an empty sequence. An error when the header or the TOKS section
// cannot be read (nothing to continue from). Any other defect (another version, another model,
// a bad checksum, a truncated section) leaves the sequence empty, sets `problem`, and the
// caller re-prefills the tokens.
Result<ParkRead> read_park_file(const std::string& path, const Model& model, KvType kv_type, KvSequence& seq);

// The disk budget: park files (*.park) in one directory, evicted least recently used first,
// where use is the file's modification time (park writes it; call touch_park_file at wake).
// Eviction only ever costs a re-prefill. `keep` (a path, may be empty) is never removed.
struct ParkEviction {
    std::vector<std::string> removed;  // oldest first
    uint64_t bytes_after = 0;          // the park files' total size afterwards
};
Result<ParkEviction> enforce_park_budget(const std::string& dir, uint64_t budget_bytes, const std::string& keep = {});
Status touch_park_file(const std::string& path);

}  // namespace arbor
