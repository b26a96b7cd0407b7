"""Midpoint subdivision of a binary little-endian PLY triangle mesh, or a Wavefront OBJ one (`v` and `f` lines), each level splitting every face into four at its edge midpoints, written as binary PLY: OUT-1.ply ... OUT-K.ply.

Usage: python3 xtask/generators/subdivide_ply.py IN.ply|IN.obj OUT K

Used for the whole-command tables of docs/benchmarks.md (issue 55): the bunny scan subdivided to 1.6 M and 6.39 M faces, the dragon and bumpy cube of ../shared/data/rxmesh-inputs to 5.12 M and 2.56 M. numpy only; faces other than triangles are fanned.
"""
import sys, numpy as np
def read_ply(p):
    b=open(p,'rb').read(); h=b.index(b'end_header\n')+11; head=b[:h].decode().split('\n')
    nv=nf=0; props=[]; fmt=''
    for l in head:
        w=l.split()
        if not w: continue
        if w[0]=='format': fmt=w[1]
        if w[0]=='element' and w[1]=='vertex': nv=int(w[2]); cur='v'
        elif w[0]=='element' and w[1]=='face': nf=int(w[2]); cur='f'
        elif w[0]=='property' and cur=='v': props.append(w[1])
    assert fmt=='binary_little_endian', fmt
    sz={'float':4,'double':8,'uchar':1,'int':4,'uint':4}
    dt=np.dtype([(f'p{i}', {'float':'<f4','double':'<f8','uchar':'u1','int':'<i4','uint':'<u4'}[t]) for i,t in enumerate(props)])
    V=np.frombuffer(b,dtype=dt,count=nv,offset=h); P=np.stack([V['p0'],V['p1'],V['p2']],1).astype(np.float32)
    o=h+nv*dt.itemsize; F=[]
    rest=np.frombuffer(b,dtype=np.uint8,offset=o)
    # faces: uchar count + int32 indices; handle any counts by walking
    fd=np.dtype([('n','u1'),('i','<i4',3)])
    if len(rest)>=nf*13 and (np.frombuffer(b,dtype=fd,count=nf,offset=o)['n']==3).all():
        F=np.frombuffer(b,dtype=fd,count=nf,offset=o)['i'].astype(np.int64)
    else:
        k=o; L=[]
        for _ in range(nf):
            n=b[k]; idx=np.frombuffer(b,dtype='<i4',count=n,offset=k+1); k+=1+4*n
            for j in range(1,n-1): L.append((idx[0],idx[j],idx[j+1]))
        F=np.array(L,dtype=np.int64)
    return P,F
def subdivide(P,F):
    E=np.concatenate([F[:,[0,1]],F[:,[1,2]],F[:,[2,0]]]); E.sort(1)
    u,inv=np.unique(E[:,0]*len(P)+E[:,1],return_inverse=True)
    a=u//len(P); c=u%len(P); M=(P[a]+P[c])/2; m=len(F); n=len(P)
    e=inv.reshape(3,m).T+n
    F2=np.concatenate([np.stack([F[:,0],e[:,0],e[:,2]],1),np.stack([F[:,1],e[:,1],e[:,0]],1),np.stack([F[:,2],e[:,2],e[:,1]],1),e])
    return np.concatenate([P,M]).astype(np.float32),F2
def write_ply(p,P,F):
    with open(p,'wb') as f:
        f.write(f"ply\nformat binary_little_endian 1.0\nelement vertex {len(P)}\nproperty float x\nproperty float y\nproperty float z\nelement face {len(F)}\nproperty list uchar int vertex_indices\nend_header\n".encode())
        f.write(P.astype('<f4').tobytes())
        fd=np.zeros(len(F),dtype=np.dtype([('n','u1'),('i','<i4',3)])); fd['n']=3; fd['i']=F; f.write(fd.tobytes())
def read_obj(p):
    V=[]; F=[]
    for l in open(p):
        w=l.split()
        if not w: continue
        if w[0]=='v': V.append([float(x) for x in w[1:4]])
        elif w[0]=='f':
            idx=[int(x.split('/')[0])-1 for x in w[1:]]
            for j in range(1,len(idx)-1): F.append((idx[0],idx[j],idx[j+1]))
    return np.array(V,dtype=np.float32),np.array(F,dtype=np.int64)
P,F=(read_obj if sys.argv[1].endswith('.obj') else read_ply)(sys.argv[1])
for k in range(1,int(sys.argv[3])+1):
    P,F=subdivide(P,F); write_ply(f"{sys.argv[2]}-{k}.ply",P,F); print(k,len(P),len(F),flush=True)
