// Park files (arbor/park.hpp): the model fingerprint, the writer and the reader.
#include <arbor/park.hpp>

#include "core/atomic_file.hpp"
#include "model/cpu_pass.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace arbor {
namespace {

constexpr char kMagic[8] = {'A', 'R', 'B', 'P', 'A', 'R', 'K', '\0'};
constexpr size_t kHeaderBytes = 24;

constexpr uint32_t tag_of(const char (&s)[5]) {
    return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
           uint32_t(uint8_t(s[3])) << 24;
}
constexpr uint32_t kToks = tag_of("TOKS"), kSamp = tag_of("SAMP"), kFprt = tag_of("FPRT"), kLogt = tag_of("LOGT"),
                   kKvcl = tag_of("KVCL"), kEnd = tag_of("END ");

std::string tag_name(uint32_t t) {
    std::string s(4, ' ');
    for (int i = 0; i < 4; ++i) {
        const char c = char((t >> (8 * i)) & 0xff);
        s[size_t(i)] = c >= 32 && c < 127 ? c : '?';
    }
    return s;
}

template <typename T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

struct Cursor {
    std::string_view b;
    size_t pos = 0;
    bool ok = true;
    template <typename T>
    T get() {
        T v{};
        if (pos + sizeof v > b.size()) {
            ok = false;
            return v;
        }
        std::memcpy(&v, b.data() + pos, sizeof v);
        pos += sizeof v;
        return v;
    }
    std::string_view bytes(size_t n) {
        if (pos + n > b.size() || pos + n < pos) {
            ok = false;
            return {};
        }
        auto s = b.substr(pos, n);
        pos += n;
        return s;
    }
};

// Calls f(ptr, bytes) for every stored run of the cells [0, n) of seq, in file order.
template <typename F>
void for_each_run(const KvLayout& L, int64_t n, int64_t n_pages, F&& f) {
    for (int64_t p = 0; p < n_pages; ++p) {
        const int64_t cells = std::min(kKvPageCells, n - p * kKvPageCells);
        for (int64_t l = 0; l < L.n_layer; ++l) {
            for (int64_t h = 0; h < L.n_head_kv; ++h) f(p, L.k_offset(l, h), size_t(cells * L.head_dim_k * L.elem_bytes));
            for (int64_t h = 0; h < L.n_head_kv; ++h) f(p, L.v_offset(l, h), size_t(cells * L.head_dim_v * L.elem_bytes));
            // Indexer keys (flashnext); the pooled block keys are derived and rebuilt at wake.
            if (L.index_dim > 0) f(p, L.index_offset(l), size_t(cells * L.index_dim * L.elem_bytes));
        }
    }
}

class SectionWriter {
public:
    explicit SectionWriter(AtomicFile& f) : f_(f) {}
    Status begin(uint32_t tag, uint64_t len) {
        sum_ = Checksum64();
        std::string h;
        put(h, tag);
        put(h, uint32_t(0));
        put(h, len);
        return raw(h.data(), h.size());
    }
    Status data(const void* p, size_t n) { return raw(p, n); }
    Status end() {
        const uint64_t d = sum_.digest();
        buf_.append(reinterpret_cast<const char*>(&d), 8);
        return {};
    }
    Status flush() {
        if (buf_.empty()) return {};
        auto st = f_.write(buf_.data(), buf_.size());
        buf_.clear();
        return st;
    }
    Status whole(uint32_t tag, std::string_view payload) {
        if (auto st = begin(tag, payload.size()); !st) return st;
        if (auto st = data(payload.data(), payload.size()); !st) return st;
        return end();
    }

private:
    Status raw(const void* p, size_t n) {
        sum_.update(p, n);
        buf_.append(static_cast<const char*>(p), n);
        if (buf_.size() >= (size_t(1) << 20)) return flush();
        return {};
    }
    AtomicFile& f_;
    Checksum64 sum_;
    std::string buf_;
};

// Reads exactly n bytes at off.
bool read_at(int fd, uint64_t off, void* dst, size_t n) {
    auto* p = static_cast<uint8_t*>(dst);
    while (n > 0) {
        const ssize_t r = ::pread(fd, p, n, off_t(off));
        if (r <= 0) {
            if (r < 0 && errno == EINTR) continue;
            return false;
        }
        p += r;
        off += uint64_t(r);
        n -= size_t(r);
    }
    return true;
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

struct SectionAt {
    uint32_t tag = 0, reserved = 0;
    uint64_t payload_off = 0, len = 0;
    uint64_t checksum = 0;  // as stored
};

}  // namespace

ModelFingerprint ModelFingerprint::of(const Model& model, KvType kv_type) {
    ModelFingerprint f;
    const GgufFile& g = model.gguf();
    f.file_size = g.file_size();
    Checksum64 c;
    for (const GgufTensor& t : g.tensors()) {
        c.update(t.name.data(), t.name.size());
        std::string rec;
        put(rec, t.n_dims);
        for (int64_t ne : t.ne) put(rec, ne);
        put(rec, uint32_t(t.type));
        put(rec, t.offset);
        put(rec, t.nbytes);
        put(rec, t.split);
        c.update(rec.data(), rec.size());
    }
    f.tensor_table_hash = c.digest();
    const ModelConfig& m = model.config();
    f.architecture = m.arch_name;
    f.kv_type = kv_type;
    f.n_layer = m.n_layer;
    f.n_head_kv = m.n_head_kv;
    f.head_dim_k = m.head_dim_k;
    f.head_dim_v = m.head_dim_v;
    f.n_vocab = m.n_vocab;
    return f;
}

std::string ModelFingerprint::encode() const {
    std::string s;
    put(s, file_size);
    put(s, tensor_table_hash);
    put(s, uint32_t(architecture.size()));
    s += architecture;
    put(s, uint32_t(kv_type == KvType::F32 ? 1 : 0));
    for (int64_t v : {n_layer, n_head_kv, head_dim_k, head_dim_v, page_cells, n_vocab}) put(s, v);
    return s;
}

Result<ModelFingerprint> ModelFingerprint::decode(std::string_view bytes) {
    Cursor c{bytes};
    ModelFingerprint f;
    f.file_size = c.get<uint64_t>();
    f.tensor_table_hash = c.get<uint64_t>();
    const uint32_t n = c.get<uint32_t>();
    f.architecture = std::string(c.bytes(n));
    const uint32_t kv = c.get<uint32_t>();
    f.kv_type = kv == 1 ? KvType::F32 : KvType::F16;
    for (int64_t* v : {&f.n_layer, &f.n_head_kv, &f.head_dim_k, &f.head_dim_v, &f.page_cells, &f.n_vocab})
        *v = c.get<int64_t>();
    if (!c.ok || c.pos != bytes.size() || kv > 1) return make_error("model fingerprint: malformed");
    return f;
}

std::string ModelFingerprint::mismatch(const ModelFingerprint& file) const {
    auto diff = [](const char* what, const std::string& mine, const std::string& theirs) {
        return std::string(what) + ": the park file has " + theirs + ", this model " + mine;
    };
    auto num = [](auto v) { return std::to_string(v); };
    if (architecture != file.architecture) return diff("architecture", architecture, file.architecture);
    if (file_size != file.file_size) return diff("model file size", num(file_size), num(file.file_size));
    if (tensor_table_hash != file.tensor_table_hash)
        return diff("tensor table hash", num(tensor_table_hash), num(file.tensor_table_hash));
    if (kv_type != file.kv_type)
        return diff("KV type", std::string(kv_type_name(kv_type)), std::string(kv_type_name(file.kv_type)));
    if (n_layer != file.n_layer || n_head_kv != file.n_head_kv || head_dim_k != file.head_dim_k ||
        head_dim_v != file.head_dim_v || page_cells != file.page_cells || n_vocab != file.n_vocab)
        return "KV layout differs from this model's (layers, kv heads, head sizes, page size or vocabulary)";
    return "";
}

Status write_park_file(const std::string& path, const Model& model, const KvSequence& seq, const ParkContents& c) {
    const int64_t n = seq.size();
    if (n != int64_t(c.tokens.size()))
        return make_error("park: the sequence holds " + std::to_string(n) + " cells but there are " +
                          std::to_string(c.tokens.size()) + " tokens");
    if (seq.poisoned_from() >= 0)
        return make_error("park: KV cell " + std::to_string(seq.poisoned_from()) + " is poisoned; recompute it first");
    const KvLayout& L = seq.cache().layout();
    seq.cache().memory().sync();  // device passes' writes visible to these host reads
    auto file = AtomicFile::create(path);
    if (!file) return file.error();
    SectionWriter w(file.value());
    std::string head(kMagic, sizeof kMagic);
    put(head, kParkVersion);
    put(head, uint32_t(6));
    put(head, checksum64(head.data(), head.size()));
    if (auto st = w.data(head.data(), head.size()); !st) return st;  // the header is not a section

    std::string toks;
    put(toks, uint64_t(c.tokens.size()));
    toks.append(reinterpret_cast<const char*>(c.tokens.data()), c.tokens.size() * sizeof(TokenId));
    put(toks, uint8_t(c.pending ? 1 : 0));
    put(toks, int32_t(c.pending.value_or(0)));
    put(toks, uint32_t(c.detok_state.size()));
    toks += c.detok_state;
    Status st = w.whole(kToks, toks);
    if (st) st = w.whole(kSamp, c.sampler_state);
    if (st) st = w.whole(kFprt, ModelFingerprint::of(model, L.type).encode());
    if (st)
        st = w.whole(kLogt, std::string_view(reinterpret_cast<const char*>(c.logits.data()), c.logits.size() * 4));
    if (!st) return st;

    const int64_t n_pages = (n + kKvPageCells - 1) / kKvPageCells;
    uint64_t kv_bytes = 8;
    for_each_run(L, n, n_pages, [&](int64_t, size_t, size_t bytes) { kv_bytes += bytes; });
    if (st = w.begin(kKvcl, kv_bytes); !st) return st;
    const uint64_t n_cells = uint64_t(n);
    if (st = w.data(&n_cells, 8); !st) return st;
    for_each_run(L, n, n_pages, [&](int64_t p, size_t off, size_t bytes) {
        if (st) st = w.data(seq.page_data(p) + off, bytes);
    });
    if (!st) return st;
    (void)w.end();
    if (st = w.whole(kEnd, ""); !st) return st;
    if (st = w.flush(); !st) return st;
    return file.value().commit();
}

Result<ParkRead> read_park_file(const std::string& path, const Model& model, KvType kv_type, KvSequence& seq) {
    if (seq.size() != 0) return make_error("wake: the sequence is not empty");
    Fd fd;
    fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd.fd < 0) return make_error(path + ": cannot open: " + std::strerror(errno));
    struct stat sb {};
    if (::fstat(fd.fd, &sb) != 0) return make_error(path + ": cannot stat: " + std::strerror(errno));
    const uint64_t size = uint64_t(sb.st_size);
    auto bad = [&](const std::string& why) { return make_error(path + ": not a usable park file: " + why); };

    char head[kHeaderBytes];
    if (size < kHeaderBytes || !read_at(fd.fd, 0, head, kHeaderBytes))
        return bad("truncated: " + std::to_string(size) + " bytes, the header alone is " + std::to_string(kHeaderBytes));
    if (std::memcmp(head, kMagic, sizeof kMagic) != 0) return bad("bad magic at offset 0 (not a park file)");
    uint32_t version;
    uint64_t head_sum;
    std::memcpy(&version, head + 8, 4);
    std::memcpy(&head_sum, head + 16, 8);
    if (checksum64(head, 16) != head_sum) return bad("header checksum mismatch (bytes 0-15 are corrupt)");

    // Locate the sections; stop at the first whose framing is broken.
    std::vector<SectionAt> secs;
    std::string framing_problem;
    for (uint64_t off = kHeaderBytes; off < size;) {
        char sh[16];
        if (off + 16 > size || !read_at(fd.fd, off, sh, 16)) {
            framing_problem = "truncated: a section header at offset " + std::to_string(off) + " runs past the end (" +
                              std::to_string(size) + " bytes)";
            break;
        }
        SectionAt s;
        std::memcpy(&s.tag, sh, 4);
        std::memcpy(&s.reserved, sh + 4, 4);
        std::memcpy(&s.len, sh + 8, 8);
        s.payload_off = off + 16;
        if (s.len > size || s.payload_off + s.len + 8 > size) {
            framing_problem = "truncated or corrupt: section '" + tag_name(s.tag) + "' at offset " + std::to_string(off) +
                              " claims " + std::to_string(s.len) + " bytes but the file ends at " + std::to_string(size);
            break;
        }
        read_at(fd.fd, s.payload_off + s.len, &s.checksum, 8);
        secs.push_back(s);
        off = s.payload_off + s.len + 8;
        if (s.tag == kEnd) break;
    }
    auto find = [&](uint32_t tag) -> const SectionAt* {
        for (const SectionAt& s : secs)
            if (s.tag == tag) return &s;
        return nullptr;
    };
    auto section_sum = [&](const SectionAt& s, const void* payload) {
        Checksum64 c;
        char sh[16];
        std::memcpy(sh, &s.tag, 4);
        std::memcpy(sh + 4, &s.reserved, 4);
        std::memcpy(sh + 8, &s.len, 8);
        c.update(sh, 16);
        c.update(payload, size_t(s.len));
        return c.digest();
    };
    auto load = [&](uint32_t tag, std::string& out) -> std::string {
        const SectionAt* s = find(tag);
        if (!s) return "section '" + tag_name(tag) + "' is missing" + (framing_problem.empty() ? "" : " (" + framing_problem + ")");
        out.resize(size_t(s->len));
        if (!read_at(fd.fd, s->payload_off, out.data(), out.size())) return "read error in section '" + tag_name(tag) + "'";
        if (section_sum(*s, out.data()) != s->checksum)
            return "checksum mismatch in section '" + tag_name(tag) + "' (payload at offset " +
                   std::to_string(s->payload_off) + ", " + std::to_string(s->len) + " bytes)";
        return "";
    };

    ParkRead r;
    std::string toks;
    if (auto why = load(kToks, toks); !why.empty()) return bad("the tokens cannot be read: " + why);
    Cursor c{toks};
    const uint64_t n = c.get<uint64_t>();
    if (!c.ok || n > toks.size() / sizeof(TokenId)) return bad("section 'TOKS': bad token count");
    r.contents.tokens.resize(size_t(n));
    auto ids = c.bytes(size_t(n) * sizeof(TokenId));
    if (c.ok) std::memcpy(r.contents.tokens.data(), ids.data(), ids.size());
    const uint8_t has_pending = c.get<uint8_t>();
    const int32_t pending = c.get<int32_t>();
    const uint32_t n_detok = c.get<uint32_t>();
    r.contents.detok_state = std::string(c.bytes(n_detok));
    if (!c.ok || c.pos != toks.size() || has_pending > 1) return bad("section 'TOKS': malformed");
    if (has_pending) r.contents.pending = pending;
    const int64_t n_vocab = model.config().n_vocab;
    for (size_t i = 0; i <= r.contents.tokens.size(); ++i) {
        const bool is_pending = i == r.contents.tokens.size();
        if (is_pending && !r.contents.pending) break;
        const TokenId t = is_pending ? *r.contents.pending : r.contents.tokens[i];
        if (t < 0 || t >= n_vocab)
            return bad("token " + std::to_string(t) + " at index " + std::to_string(i) + " is outside this model's vocabulary of " +
                       std::to_string(n_vocab) + " (a park file of another model)");
    }

    std::string samp, samp_problem;
    if (version == kParkVersion) {
        samp_problem = load(kSamp, samp);
        if (samp_problem.empty()) r.contents.sampler_state = std::move(samp);
    }

    // From here on a defect costs a re-prefill only.
    auto problem = [&]() -> std::string {
        if (version != kParkVersion)
            return "format version " + std::to_string(version) + " (this engine reads version " + std::to_string(kParkVersion) + ")";
        if (!samp_problem.empty()) return samp_problem;
        std::string fp, end;
        if (auto why = load(kFprt, fp); !why.empty()) return why;
        auto f = ModelFingerprint::decode(fp);
        if (!f) return f.message();
        if (auto why = ModelFingerprint::of(model, kv_type).mismatch(f.value()); !why.empty())
            return "made with another model or KV type: " + why;
        std::string lg;
        if (auto why = load(kLogt, lg); !why.empty()) return why;
        if (lg.size() != size_t(n_vocab) * 4) return "section 'LOGT' holds " + std::to_string(lg.size()) + " bytes, not n_vocab floats";
        r.contents.logits.resize(size_t(n_vocab));
        std::memcpy(r.contents.logits.data(), lg.data(), lg.size());
        if (!find(kEnd)) return framing_problem.empty() ? "section 'END ' is missing (an incomplete file)" : framing_problem;
        if (auto why = load(kEnd, end); !why.empty()) return why;
        const SectionAt* kv = find(kKvcl);
        if (!kv) return "section 'KVCL' is missing";
        uint64_t n_cells = 0;
        read_at(fd.fd, kv->payload_off, &n_cells, 8);
        if (n_cells != n) return "section 'KVCL' holds " + std::to_string(n_cells) + " cells for " + std::to_string(n) + " tokens";
        if (int64_t(n) > seq.capacity())
            return std::to_string(n) + " cells do not fit the context of " + std::to_string(seq.capacity());
        const KvLayout& L = seq.cache().layout();
        const int64_t n_pages = (int64_t(n) + kKvPageCells - 1) / kKvPageCells;
        uint64_t expect = 8;
        for_each_run(L, int64_t(n), n_pages, [&](int64_t, size_t, size_t b) { expect += b; });
        if (expect != kv->len) return "section 'KVCL' has " + std::to_string(kv->len) + " bytes, the layout needs " + std::to_string(expect);
        if (auto st = seq.prepare_write(0, int64_t(n)); !st) return st.message();
        Checksum64 sum;
        char sh[16];
        std::memcpy(sh, &kv->tag, 4);
        std::memcpy(sh + 4, &kv->reserved, 4);
        std::memcpy(sh + 8, &kv->len, 8);
        sum.update(sh, 16);
        sum.update(&n_cells, 8);
        uint64_t off = kv->payload_off + 8;
        bool io_ok = true;
        for_each_run(L, int64_t(n), n_pages, [&](int64_t p, size_t o, size_t b) {
            if (!io_ok) return;
            uint8_t* dst = seq.page_data(p) + o;
            io_ok = read_at(fd.fd, off, dst, b);
            sum.update(dst, b);
            off += b;
        });
        if (!io_ok) return "read error in section 'KVCL'";
        if (sum.digest() != kv->checksum) return "checksum mismatch in section 'KVCL' (the KV cells are corrupt)";
        seq.set_size(int64_t(n));
        if (const int64_t bad = seq.first_poisoned(0, int64_t(n)); bad >= 0)
            return "KV cell " + std::to_string(bad) + " in the file is poisoned (NaN)";
        cpu::rebuild_index_pools(model, seq, int64_t(n));
        return "";
    }();
    if (!problem.empty()) {
        seq.truncate(0);
        r.contents.logits.clear();
        r.problem = problem;
        return r;
    }
    seq.set_size(int64_t(n));
    r.cells_restored = true;
    r.cells = int64_t(n);
    return r;
}

}  // namespace arbor
