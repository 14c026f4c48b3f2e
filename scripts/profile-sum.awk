# Sums the "max" column of a bench --profile stage table by stage name (layer numbers removed).
/^[0-9]+ / && / max / {
    line = $0; sub(/^[0-9]+ /, "", line)
    name = line; sub(/ +mean .*/, "", name); gsub(/ L[0-9]+/, "", name)
    mx = line; sub(/.* max +/, "", mx); sub(/ us.*/, "", mx)
    sum[name] += mx; n[name]++
}
/^wait L/ { mx = $0; sub(/.* max +/, "", mx); sub(/ us.*/, "", mx); sum["(barrier waits)"] += mx; n["(barrier waits)"]++ }
END { for (k in sum) printf "  %10.1f us  %4d x  %s\n", sum[k], n[k], k }
