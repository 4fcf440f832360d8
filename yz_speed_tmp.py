import time, numpy as np, gymnasium as gym, dice_envs
env = gym.make_vec("dice_envs/Yahtzee-v0", num_envs=4096, vectorization_mode="vector_entry_point")
obs, info = env.reset(seed=0)
rng = np.random.default_rng(0)
# random legal actions: sample uniformly among legal by random scores
def legal_random(mask):
    scores = rng.random(mask.shape) * mask
    return scores.argmax(axis=1)
acts=[]
mask=info["action_mask"]
t=time.perf_counter(); steps=200
for k in range(steps):
    a = legal_random(mask)
    obs, r, term, trunc, info = env.step(a)
    mask=info["action_mask"]
dt=time.perf_counter()-t
print("with action choice", 4096*steps/dt/1e6, "M/s")
# pre-drawn uniform random actions (benchmark style)
actions=[rng.integers(45,size=4096) for _ in range(16)]
t=time.perf_counter()
for k in range(steps): env.step(actions[k%16])
dt=time.perf_counter()-t
print("uniform random actions", 4096*steps/dt/1e6, "M/s")
