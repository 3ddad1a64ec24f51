def load(items=[]):
    try:
        return eval(items[0])
    except:
        return None
