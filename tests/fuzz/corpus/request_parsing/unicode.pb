
café 🙂