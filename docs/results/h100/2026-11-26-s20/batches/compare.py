#!/usr/bin/python3
"""The dispatch model (model-*) over autotune's configs (tuned-*) on ResNet-50 at batch 8 and 32,
best of two rounds per layer, counting only layers whose shape the store given had no entry for.
Usage: compare.py DIR STORE (the store the model ran from)."""
import csv,math,sys
R=sys.argv[1]; store=sys.argv[2]
have=set()
for l in open(store):
    if 'kernel: gemm,' in l:
        f=dict(p.strip().split(': ',1) for p in l.strip()[3:-1].split(', '))
        have.add((f['dtype'],f['m'],f['n'],f['k']))
def load(p): return {(r['set'],r['layer'],r['m'],r['n'],r['k']):(float(r['gflops']),r['config']) for r in csv.DictReader(open(p)) if r['row']=='layer'}
for d in ['fp32','fp16']:
    dt='f32' if d=='fp32' else 'f16'
    best={}
    for kind in ['model','tuned']:
        runs=[load(f'{R}/{kind}-r50-{d}-{i}.csv') for i in (1,2)]
        best[kind]={k:max(runs[0][k][0],runs[1][k][0]) for k in runs[0]}
    for s in sorted({k[0] for k in best['tuned']}):
        keys=[k for k in best['tuned'] if k[0]==s and (dt,k[2],k[3],k[4]) not in have]
        rs=[best['model'][k]/best['tuned'][k] for k in keys]
        allk=[k for k in best['tuned'] if k[0]==s]
        print(d,s,f'{len(keys)} of {len(allk)} layers untuned: geomean {math.exp(sum(map(math.log,rs))/len(rs)):.3f} worst {min(rs):.2f} below0.85 {sum(r<0.85 for r in rs)}')
