import csv,glob,math,collections
def load(f):
    return {(r['layer'],r['m'],r['n'],r['k'],r['set']):(float(r['gflops']),r['config']) for r in csv.DictReader(open(f)) if r['row']=='layer'}
for d in ['fp32','fp16']:
  for n in ['r18','r34']:
    best={}
    for kind in ['model-new','model-d0','tuned']:
        runs=[load(f'docs/results/h100/2026-11-26-s20/decay/{kind}-{n}-{d}-{r}.csv') for r in (1,2)]
        best[kind]={k:(max(runs[0][k][0],runs[1][k][0]),runs[0][k][1]) for k in runs[0]}
    sets=sorted({k[4] for k in best['tuned']})
    for s in sets:
        keys=[k for k in best['tuned'] if k[4]==s]
        out=[]
        for kind in ['model-new','model-d0']:
            rs=[best[kind][k][0]/best['tuned'][k][0] for k in keys]
            g=math.exp(sum(map(math.log,rs))/len(rs))
            out.append(f'{kind} {g:.3f} worst {min(rs):.2f} below0.85 {sum(r<0.85 for r in rs)}/{len(rs)}')
        print(d,s,' | '.join(out))
